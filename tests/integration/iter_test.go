package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect ranges over seq, failing the test on the first error, and
// counts the elements (so that duplicates show).
func collectScan[T comparable](t *testing.T, seq func(func(T, error) bool)) map[T]int {
	t.Helper()
	out := make(map[T]int)
	for v, err := range seq {
		require.NoError(t, err)
		out[v]++
	}
	return out
}

// TestScanIterators: ScanAll, HScanAll, SScanAll and ZScanAll yield every
// element of collections large enough to take many pages (with MATCH,
// COUNT and TYPE sent on each page), stop when the caller breaks, and end
// with the error of a failing call.
func TestScanIterators(t *testing.T) {
	// In parallel with the other tests that wait on servers of their own:
	// nothing here depends on how fast calls come back.
	t.Parallel()
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		p := fmt.Sprintf("iter%d:", proto)
		const n = 1000
		b := c.NewBatch()
		for i := range n {
			b.Set(p+"k"+strconv.Itoa(i), "v", nil)
			b.HSet(p+"h", respire.FieldValue{Field: "f" + strconv.Itoa(i), Value: "v" + strconv.Itoa(i)})
			b.SAdd(p+"s", "m"+strconv.Itoa(i))
			b.ZAdd(p+"z", []respire.ScoredMember{{Member: "m" + strconv.Itoa(i), Score: float64(i)}}, nil)
		}
		require.NoError(t, b.Exec(ctx))

		count := int64(50)
		keys := collectScan(t, c.ScanAll(ctx, &respire.ScanOptions{Match: p + "k*", Count: count}))
		assert.Equal(t, n, len(keys))
		for i := range n {
			assert.Contains(t, keys, p+"k"+strconv.Itoa(i))
		}
		// TYPE is sent: only the hash, set and sorted set are not strings.
		hashes := collectScan(t, c.ScanAll(ctx, &respire.ScanOptions{Match: p + "*", Type: "hash"}))
		assert.Equal(t, map[string]int{p + "h": 1}, hashes)

		fields := collectScan(t, c.HScanAll(ctx, p+"h", &respire.HScanOptions{Count: count}))
		assert.Equal(t, n, len(fields))
		assert.Contains(t, fields, respire.FieldValue{Field: "f7", Value: "v7"})
		members := collectScan(t, c.SScanAll(ctx, p+"s", &respire.SScanOptions{Match: "m1*"}))
		assert.Len(t, members, 111) // m1, m10-m19, m100-m199
		scored := collectScan(t, c.ZScanAll(ctx, p+"z", nil))
		assert.Equal(t, n, len(scored))
		assert.Contains(t, scored, respire.ScoredMember{Member: "m42", Score: 42})

		// Breaking stops the iterator: no more pages are asked for. (Without
		// MATCH, a page of COUNT 10 over a thousand keys is never empty.)
		_, err := srv.Do(ctx, "CONFIG", "RESETSTAT")
		require.NoError(t, err)
		ten := int64(10)
		seen := 0
		for _, err := range c.ScanAll(ctx, &respire.ScanOptions{Count: ten}) {
			require.NoError(t, err)
			if seen++; seen == 1 {
				break
			}
		}
		assert.Equal(t, 1, seen)
		assert.Equal(t, int64(1), cmdCalls(t, srv, "scan"), "one page for one key")
		collectScan(t, c.ScanAll(ctx, &respire.ScanOptions{Count: ten}))
		assert.Greater(t, cmdCalls(t, srv, "scan"), int64(50), "a whole scan takes many pages")

		// An error ends the iteration as its last pair: HSCAN of a string.
		var errs []error
		for fv, err := range c.HScanAll(ctx, p+"k1", nil) {
			assert.Zero(t, fv)
			errs = append(errs, err)
		}
		require.Len(t, errs, 1)
		var se *respire.Error
		require.ErrorAs(t, errs[0], &se)
		assert.Equal(t, "WRONGTYPE", se.Prefix)

		// A context that ends stops it with the context's error.
		done, cancel := context.WithCancel(ctx)
		cancel()
		errs = errs[:0]
		for _, err := range c.ScanAll(done, nil) {
			errs = append(errs, err)
		}
		require.Len(t, errs, 1)
		assert.True(t, errors.Is(errs[0], context.Canceled), "%v", errs[0])

		// An empty collection yields nothing; the iterator can be ranged
		// again and starts over.
		assert.Empty(t, collectScan(t, c.SScanAll(ctx, p+"missing", nil)))
		seq := c.SScanAll(ctx, p+"s", nil)
		assert.Len(t, collectScan(t, seq), n)
		assert.Len(t, collectScan(t, seq), n)
	})
}

// TestScanIteratorDeadline: a server that stops answering ends the
// iteration by the context's deadline with an error, not a hang.
func TestScanIteratorDeadline(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "iterdl:k", "v", nil))
	_, err := srv.Do(ctx, "CLIENT", "PAUSE", "2000", "ALL")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	var last error
	for _, err := range c.ScanAll(short, nil) {
		last = err
	}
	require.Error(t, last)
	assert.True(t, errors.Is(last, context.DeadlineExceeded), "%v", last)
	_, err = srv.Do(ctx, "CLIENT", "UNPAUSE")
	require.NoError(t, err)
}
