package respire

// Leased array replies: MGetLease, HMGetLease and LRangeLease read every
// element of the reply into one pooled buffer, with the bounds of each
// element beside it, so that the call does not allocate once the pool is
// warm. They follow the rule of lease.go: the decoder runs on the reader
// goroutine and writes only into the LeaseList it takes from the pool,
// which it leaves in the command's result.
//
// There are no Append forms of these commands. An Append form appends to
// one buffer of the caller's, and a list needs a second one for the
// bounds of its elements: taking both from the caller would make a
// LeaseList of the caller's own, with more to get wrong. A caller that
// wants the values in its own buffer appends them from the LeaseList
// (append(dst, v.Bytes(i)...)) and releases it.
//
// A LeaseList whose caller left (its context ended while the reply was on
// its way) is given back to the pool by the command's Recycle, as a Lease
// is.
//
// They are written by hand rather than generated: three commands share
// them, and the generator's Lease forms cover single bulk replies only.

import (
	"context"
	"slices"
	"unsafe"

	"github.com/respire-go/respire/internal/transport/resp"
)

// LeaseList holds the elements of an array reply (MGetLease, HMGetLease,
// LRangeLease) in one buffer borrowed from the pool behind Lease, so that
// reading them does not allocate. Element i is Bytes(i); a null element
// (a missing key in MGET, a missing field in HMGET) is reported by Null(i).
//
// The bytes are valid until Release, which must be called exactly once,
// after the last use of any element. Misuse (a second Release, or Len,
// Bytes or Null after Release) is detected as it is for a Lease: a panic
// naming it in race builds and with the respire_leasecheck build tag,
// ignored otherwise. Keeping a LeaseList without releasing it is safe but
// wastes the pool.
//
// The methods of a nil *LeaseList treat it as a list of no elements, and
// its Release does nothing.
type LeaseList Lease

// span is the bounds of one element of a LeaseList in its buffer; start
// is -1 for a null element.
type span struct{ start, end int }

const spanSize = int(unsafe.Sizeof(span{}))

// lease returns the Lease that v is, for the shared code.
func (v *LeaseList) lease() *Lease { return (*Lease)(v) }

// live reports whether v may be read, reporting a misuse (what) if not.
func (v *LeaseList) live(what string) bool {
	if v.state.Load() != leaseLive {
		v.lease().misuse("LeaseList", what)
		return false
	}
	return true
}

// Len returns the number of elements, nulls included.
func (v *LeaseList) Len() int {
	if v == nil || !v.live("Len") {
		return 0
	}
	return len(v.spans)
}

// Bytes returns element i: nil for a null element, a non-nil slice
// otherwise, empty for an empty value. It panics when i is out of range
// [0, Len()). The bytes are valid until Release; copy what must outlive
// it. The slice's capacity ends with the element, so that appending to it
// never overwrites the next one.
func (v *LeaseList) Bytes(i int) []byte {
	s, ok := v.at(i, "Bytes")
	if !ok || s.start < 0 {
		return nil
	}
	return v.b[s.start:s.end:s.end]
}

// Null reports whether element i is null. It panics when i is out of
// range [0, Len()).
func (v *LeaseList) Null(i int) bool {
	s, ok := v.at(i, "Null")
	return ok && s.start < 0
}

// noSpans is the elements of a nil LeaseList.
var noSpans []span

// at returns the bounds of element i, or false after Release (a misuse,
// reported as such).
func (v *LeaseList) at(i int, what string) (span, bool) {
	if v == nil {
		return noSpans[i], false // a nil list is empty: out of range
	}
	if !v.live(what) {
		return span{}, false
	}
	return v.spans[i], true
}

// Release gives the buffer back to the pool. Call it exactly once, after
// the last use of the elements.
func (v *LeaseList) Release() {
	if v != nil {
		v.lease().release("LeaseList")
	}
}

// MGetLease is MGet for hot paths: the values come in one pooled
// LeaseList instead of new strings, so that the call does not allocate. A
// missing key (or one holding a non-string) is a null element. Release
// the LeaseList once done with its elements; see LeaseList.
func (c *Client) MGetLease(ctx context.Context, keys ...string) (*LeaseList, error) {
	x := c.newCmd(&cmdMGET)
	needOne(x, "key", len(keys))
	for _, k := range keys {
		x.argKey(k)
	}
	return execLeaseList(ctx, c, x, decLeaseListNull)
}

// HMGetLease is HMGet for hot paths: the values come in one pooled
// LeaseList instead of new strings, so that the call does not allocate. A
// missing field is a null element; a missing key gives all nulls. Release
// the LeaseList once done with its elements; see LeaseList.
func (c *Client) HMGetLease(ctx context.Context, key string, fields ...string) (*LeaseList, error) {
	x := c.newCmd(&cmdHMGET)
	argsHMGet(x, key, fields)
	return execLeaseList(ctx, c, x, decLeaseListNull)
}

// LRangeLease is LRange for hot paths: the elements come in one pooled
// LeaseList instead of new strings, so that the call does not allocate. A
// missing key gives an empty list. Release the LeaseList once done with
// its elements; see LeaseList.
func (c *Client) LRangeLease(ctx context.Context, key string, start, stop int64) (*LeaseList, error) {
	x := c.newCmd(&cmdLRANGE)
	argsLRange(x, key, start, stop)
	return execLeaseList(ctx, c, x, decLeaseList)
}

// execLeaseList runs x, decoded by decLeaseList or decLeaseListNull, and
// hands its LeaseList to the caller.
func execLeaseList(ctx context.Context, c *Client, x *cmd, dec decoder) (*LeaseList, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return nil, withCommand(info, err)
	}
	v, _ := x.res.Any.(*LeaseList)
	x.res.Any = nil
	c.release(x)
	return v, nil
}

// decLeaseList reads an array of strings into a LeaseList, left in r.Any.
// Elements are what readLease accepts; a null array gives a nil LeaseList.
func decLeaseList(m resp.Msg, r *result) error { return decodeLeaseList(m, r, false) }

// decLeaseListNull is decLeaseList with null elements allowed.
func decLeaseListNull(m resp.Msg, r *result) error { return decodeLeaseList(m, r, true) }

func decodeLeaseList(m resp.Msg, r *result, nulls bool) error {
	v, err := readLeaseList(m, nulls)
	if err != nil {
		return err
	}
	if v != nil {
		r.Any = v
	}
	return nil
}

// readLeaseList copies the elements of the array at the top of m into a
// LeaseList. It checks and measures the whole reply before it takes a
// buffer, so that a reply of the wrong shape takes nothing from the pool
// and the buffer it takes is never outgrown.
func readLeaseList(m resp.Msg, nulls bool) (*LeaseList, error) {
	elem := "a string"
	if nulls {
		elem = "a string or null"
	}
	n, first, err := aggregate(m, 0)
	if err != nil || n < 0 {
		return nil, err
	}
	size := 0
	for k, j := 0, first; k < n; k++ {
		v, err := node(m, j)
		if err != nil {
			return nil, err
		}
		nd := &m[v]
		if nd.Null || nd.Type == resp.TypeNull {
			if !nulls {
				return nil, want(m, v, elem)
			}
		} else if sz, ok := leaseValueSize(nd); ok {
			size += sz
		} else {
			return nil, want(m, v, elem)
		}
		j = v + 1 // every accepted element is one node
	}
	// The spans count against the buffer's size class, so that a list of
	// many short elements finds pooled spans long enough (see release).
	l := getLease(max(size, n*spanSize))
	l.spans = slices.Grow(l.spans, n)
	for k, j := 0, first; k < n; k++ {
		v := m.Value(j)
		nd := &m[v]
		start := len(l.b)
		if nd.Null || nd.Type == resp.TypeNull {
			start = -1
		} else {
			l.b = appendLeaseValue(l.b, nd)
		}
		l.spans = append(l.spans, span{start, len(l.b)})
		j = v + 1
	}
	return (*LeaseList)(l), nil
}
