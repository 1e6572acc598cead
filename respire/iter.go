package respire

import (
	"context"
	"iter"
)

// Iterators over SCAN, HSCAN, SSCAN and ZSCAN: the generated Scan, HScan,
// SScan and ZScan return one page and a cursor; the ...All forms follow the
// cursor for the caller. ScanAll's documentation says how they behave.

// ScanAll iterates over the keys of the database with SCAN, page by page,
// until the cursor returns to 0, as a range-over-func iterator:
//
//	for key, err := range c.ScanAll(ctx, &respire.ScanOptions{Match: "user:*"}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(key)
//	}
//
// It yields (key, nil) pairs and, when a call fails, one last ("", err)
// pair; breaking out of the loop stops it, with no call left behind. Each
// range starts a new scan from cursor 0. opts (nil for none) are sent with
// every page: Match, Count (a hint of the page size), Type. HScanAll,
// SScanAll and ZScanAll work the same way.
//
// A scan has SCAN's guarantees: a key present for the whole scan is
// yielded at least once; it may be yielded more than once (when the server
// rehashes, or a cluster shard fails over), and one added or removed
// during the scan may or may not be. Collect into a set when duplicates
// matter. On a single server, a scan that outlives a restart of the
// server goes on with a cursor the new process never gave, and may miss
// keys: the client cannot tell a reconnect to the same process from one
// to a new one.
//
// On a cluster it scans every primary in turn, each with its own cursor,
// in the order of their slots: the keys of the whole cluster. A primary
// that fails during its part of the scan (its connection breaks or it
// cannot be reached) is replaced by the node that serves its slots once
// the cluster has promoted one, and that shard's part starts again from
// cursor 0 there, since a cursor means something only to the server
// process that gave it: its keys are all yielded, some perhaps twice. The
// wait for the new primary ends with ctx, and the iterator with an error
// that names the shard. Slots that migrate between shards during a scan
// may be missed or repeated, as with any cluster-wide SCAN. A primary that
// stays up but turns replica (a manual failover) is scanned to the end:
// it holds the same keys.
func (c *Client) ScanAll(ctx context.Context, opts *ScanOptions) iter.Seq2[string, error] {
	return scanAll(ctx, c, "", false, &scanSpec{
		info: &cmdSCAN,
		args: func(x *cmd, cursor int64) { argsScan(x, cursor, opts) },
		dec:  decScanPage,
	}, func(v any) ([]string, int64) { p, _ := v.(ScanPage); return p.Items, p.Cursor })
}

// HScanAll iterates over the fields and values of the hash at key with
// HSCAN, as ScanAll iterates over keys. opts may be nil. On a cluster every
// page goes to the primary of key's slot (not to a replica, whatever
// ReadFrom says: a cursor is only good on the node that gave it); when that
// node fails or the slot moves to another, the scan starts again from
// cursor 0 on the new owner, as ScanAll does for a shard.
func (c *Client) HScanAll(ctx context.Context, key string, opts *HScanOptions) iter.Seq2[FieldValue, error] {
	return scanAll(ctx, c, key, true, &scanSpec{
		info: &cmdHSCAN,
		args: func(x *cmd, cursor int64) { argsHScan(x, key, cursor, opts) },
		dec:  decHScanPage,
	}, func(v any) ([]FieldValue, int64) { p, _ := v.(HScanPage); return p.Items, p.Cursor })
}

// SScanAll iterates over the members of the set at key with SSCAN, as
// ScanAll iterates over keys. opts may be nil. On a cluster it goes to the
// primary of key's slot, as HScanAll does.
func (c *Client) SScanAll(ctx context.Context, key string, opts *SScanOptions) iter.Seq2[string, error] {
	return scanAll(ctx, c, key, true, &scanSpec{
		info: &cmdSSCAN,
		args: func(x *cmd, cursor int64) { argsSScan(x, key, cursor, opts) },
		dec:  decScanPage,
	}, func(v any) ([]string, int64) { p, _ := v.(ScanPage); return p.Items, p.Cursor })
}

// ZScanAll iterates over the members and scores of the sorted set at key
// with ZSCAN, as ScanAll iterates over keys. opts may be nil. On a cluster it
// goes to the primary of key's slot, as HScanAll does.
func (c *Client) ZScanAll(ctx context.Context, key string, opts *ZScanOptions) iter.Seq2[ScoredMember, error] {
	return scanAll(ctx, c, key, true, &scanSpec{
		info: &cmdZSCAN,
		args: func(x *cmd, cursor int64) { argsZScan(x, key, cursor, opts) },
		dec:  decZScanPage,
	}, func(v any) ([]ScoredMember, int64) { p, _ := v.(ZScanPage); return p.Items, p.Cursor })
}

// scanSpec describes the page command of a scan.
type scanSpec struct {
	info *cmdInfo
	args func(x *cmd, cursor int64)
	dec  decoder
}

// pager returns the decoded reply of one page of a part of a scan, from
// cursor (backend.scan).
type pager func(cursor int64) (any, error)

// scanAll is the iterator of a scan: the parts the backend names (keyed:
// the scan of key), one after the other, each page by page from cursor 0
// until its cursor returns to 0; page takes a page's items and cursor out
// of its decoded reply.
func scanAll[T any](ctx context.Context, c *Client, key string, keyed bool, sc *scanSpec, page func(v any) ([]T, int64)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		parts, err := c.be.scan(ctx, sc, key, keyed)
		if err != nil {
			var zero T
			yield(zero, err)
			return
		}
		for _, p := range parts {
			ok := yieldPages(yield, func(cursor int64) ([]T, int64, error) {
				v, err := p(cursor)
				if err != nil {
					return nil, 0, err
				}
				items, next := page(v)
				return items, next, nil
			})
			if !ok {
				return
			}
		}
	}
}

// yieldPages yields the elements of the pages page returns, from cursor 0
// until the cursor returns to 0, and an error as the last pair; false when
// the caller stopped or an error was yielded.
func yieldPages[T any](yield func(T, error) bool, page func(cursor int64) ([]T, int64, error)) bool {
	var cursor int64
	for {
		items, next, err := page(cursor)
		if err != nil {
			var zero T
			yield(zero, err)
			return false
		}
		for _, it := range items {
			if !yield(it, nil) {
				return false
			}
		}
		if next == 0 {
			return true
		}
		cursor = next
	}
}
