package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// leaseFormAllocs checks that every Lease and Append form allocates
// nothing per call, with ctx, on c. Forms that consume what they read
// (GETDEL, LPOP, SPOP, ...) write it back in the same call, with a command
// that allocates nothing either. The vector-set forms (VGETATTR,
// VRANDMEMBER) need a server with vector sets and are left out. The
// blocking forms (BLMOVE, BRPOPLPUSH) run on the blocking pool, whose
// per-call cancellation (a context of its own, an AfterFunc on the pool's)
// costs 15 allocations: not a hot path, and held to that.
func leaseFormAllocs(t *testing.T, c *respire.Client, ctx context.Context) {
	val := strings.Repeat("v", 1024)
	k, h, l, s, z, x := "allocs:lf:k", "allocs:lf:h", "allocs:lf:l", "allocs:lf:s", "allocs:lf:z", "allocs:lf:x"
	require.NoError(t, c.Set(ctx, k, val, nil))
	_, err := c.Del(ctx, h, l, s, z, x)
	require.NoError(t, err)
	_, err = c.HSet(ctx, h, respire.FieldValue{Field: "f", Value: val})
	require.NoError(t, err)
	_, err = c.RPush(ctx, l, "a", "b", "c")
	require.NoError(t, err)
	_, err = c.SAdd(ctx, s, "a", "b", "c")
	require.NoError(t, err)
	_, err = c.ZAdd(ctx, z, []respire.ScoredMember{{Member: "a", Score: 1}, {Member: "b", Score: 2}}, nil)
	require.NoError(t, err)
	fields := []respire.FieldValue{{Field: "f", Value: "v"}}
	trim := &respire.XAddOptions{Trim: &respire.Trim{Strategy: respire.TrimStrategyMaxLen, Threshold: "10"}}
	left, right := respire.SideLeft, respire.SideRight

	buf := make([]byte, 0, 2048)
	check := allocChecker(t, &err)
	lease := func(name string, fn func() (*respire.Lease, error)) {
		check(name, 0, func() {
			var le *respire.Lease
			le, err = fn()
			le.Release()
		})
	}
	appendTo := func(name string, fn func([]byte) ([]byte, error)) {
		check(name, 0, func() { buf, err = fn(buf[:0]) })
	}
	restore := func(e error) {
		if err == nil {
			err = e
		}
	}

	lease("DumpLease", func() (*respire.Lease, error) { return c.DumpLease(ctx, k) })
	appendTo("DumpAppend", func(b []byte) ([]byte, error) { return c.DumpAppend(ctx, b, k) })
	lease("GetLease", func() (*respire.Lease, error) { return c.GetLease(ctx, k) })
	appendTo("GetAppend", func(b []byte) ([]byte, error) { return c.GetAppend(ctx, b, k) })
	lease("GetDelLease", func() (*respire.Lease, error) {
		le, e := c.GetDelLease(ctx, k)
		restore(c.Set(ctx, k, val, nil))
		return le, e
	})
	appendTo("GetDelAppend", func(b []byte) ([]byte, error) {
		b, e := c.GetDelAppend(ctx, b, k)
		restore(c.Set(ctx, k, val, nil))
		return b, e
	})
	lease("GetExLease", func() (*respire.Lease, error) { return c.GetExLease(ctx, k, nil) })
	appendTo("GetExAppend", func(b []byte) ([]byte, error) { return c.GetExAppend(ctx, b, k, nil) })
	lease("GetRangeLease", func() (*respire.Lease, error) { return c.GetRangeLease(ctx, k, 0, 99) })
	appendTo("GetRangeAppend", func(b []byte) ([]byte, error) { return c.GetRangeAppend(ctx, b, k, 0, 99) })
	lease("GetSetLease", func() (*respire.Lease, error) { return c.GetSetLease(ctx, k, val) })
	appendTo("GetSetAppend", func(b []byte) ([]byte, error) { return c.GetSetAppend(ctx, b, k, val) })
	lease("SetGetLease", func() (*respire.Lease, error) { return c.SetGetLease(ctx, k, val, nil) })
	appendTo("SetGetAppend", func(b []byte) ([]byte, error) { return c.SetGetAppend(ctx, b, k, val, nil) })
	lease("SubStrLease", func() (*respire.Lease, error) { return c.SubStrLease(ctx, k, 0, 99) })
	appendTo("SubStrAppend", func(b []byte) ([]byte, error) { return c.SubStrAppend(ctx, b, k, 0, 99) })
	lease("LCSLease", func() (*respire.Lease, error) { return c.LCSLease(ctx, k, k, nil) })
	appendTo("LCSAppend", func(b []byte) ([]byte, error) { return c.LCSAppend(ctx, b, k, k, nil) })
	lease("ObjectEncodingLease", func() (*respire.Lease, error) { return c.ObjectEncodingLease(ctx, k) })
	appendTo("ObjectEncodingAppend", func(b []byte) ([]byte, error) { return c.ObjectEncodingAppend(ctx, b, k) })
	lease("HGetLease", func() (*respire.Lease, error) { return c.HGetLease(ctx, h, "f") })
	appendTo("HGetAppend", func(b []byte) ([]byte, error) { return c.HGetAppend(ctx, b, h, "f") })
	lease("HRandFieldLease", func() (*respire.Lease, error) { return c.HRandFieldLease(ctx, h) })
	appendTo("HRandFieldAppend", func(b []byte) ([]byte, error) { return c.HRandFieldAppend(ctx, b, h) })
	lease("LIndexLease", func() (*respire.Lease, error) { return c.LIndexLease(ctx, l, 1) })
	appendTo("LIndexAppend", func(b []byte) ([]byte, error) { return c.LIndexAppend(ctx, b, l, 1) })
	lease("LMoveLease", func() (*respire.Lease, error) { return c.LMoveLease(ctx, l, l, left, right) })
	appendTo("LMoveAppend", func(b []byte) ([]byte, error) { return c.LMoveAppend(ctx, b, l, l, left, right) })
	const blockingAllocs = 15
	check("BLMoveLease", blockingAllocs, func() {
		var le *respire.Lease
		le, err = c.BLMoveLease(ctx, l, l, left, right, 0)
		le.Release()
	})
	check("BLMoveAppend", blockingAllocs, func() { buf, err = c.BLMoveAppend(ctx, buf[:0], l, l, left, right, 0) })
	lease("RPopLPushLease", func() (*respire.Lease, error) { return c.RPopLPushLease(ctx, l, l) })
	appendTo("RPopLPushAppend", func(b []byte) ([]byte, error) { return c.RPopLPushAppend(ctx, b, l, l) })
	check("BRPopLPushLease", blockingAllocs, func() {
		var le *respire.Lease
		le, err = c.BRPopLPushLease(ctx, l, l, 0)
		le.Release()
	})
	check("BRPopLPushAppend", blockingAllocs, func() { buf, err = c.BRPopLPushAppend(ctx, buf[:0], l, l, 0) })
	// Each pop is followed by a push that puts an element back.
	pops := []struct {
		name  string
		lease func() (*respire.Lease, error)
		app   func([]byte) ([]byte, error)
		put   func() error
	}{
		{"LPop", func() (*respire.Lease, error) { return c.LPopLease(ctx, l) },
			func(b []byte) ([]byte, error) { return c.LPopAppend(ctx, b, l) },
			func() error { _, e := c.RPush(ctx, l, "a"); return e }},
		{"RPop", func() (*respire.Lease, error) { return c.RPopLease(ctx, l) },
			func(b []byte) ([]byte, error) { return c.RPopAppend(ctx, b, l) },
			func() error { _, e := c.LPush(ctx, l, "c"); return e }},
		{"SPop", func() (*respire.Lease, error) { return c.SPopLease(ctx, s) },
			func(b []byte) ([]byte, error) { return c.SPopAppend(ctx, b, s) },
			func() error { _, e := c.SAdd(ctx, s, "a", "b", "c"); return e }},
	}
	for _, p := range pops {
		lease(p.name+"Lease", func() (*respire.Lease, error) {
			le, e := p.lease()
			restore(p.put())
			return le, e
		})
		appendTo(p.name+"Append", func(b []byte) ([]byte, error) {
			b, e := p.app(b)
			restore(p.put())
			return b, e
		})
	}
	lease("SRandMemberLease", func() (*respire.Lease, error) { return c.SRandMemberLease(ctx, s) })
	appendTo("SRandMemberAppend", func(b []byte) ([]byte, error) { return c.SRandMemberAppend(ctx, b, s) })
	lease("ZRandMemberLease", func() (*respire.Lease, error) { return c.ZRandMemberLease(ctx, z) })
	appendTo("ZRandMemberAppend", func(b []byte) ([]byte, error) { return c.ZRandMemberAppend(ctx, b, z) })
	lease("XAddLease", func() (*respire.Lease, error) { return c.XAddLease(ctx, x, "*", fields, trim) })
	appendTo("XAddAppend", func(b []byte) ([]byte, error) { return c.XAddAppend(ctx, b, x, "*", fields, trim) })
	lease("XAddNoMkStreamLease", func() (*respire.Lease, error) { return c.XAddNoMkStreamLease(ctx, x, "*", fields, trim) })
	appendTo("XAddNoMkStreamAppend", func(b []byte) ([]byte, error) {
		return c.XAddNoMkStreamAppend(ctx, b, x, "*", fields, trim)
	})
	for _, list := range []struct {
		name string
		fn   func() (*respire.LeaseList, error)
	}{
		{"MGetLease", func() (*respire.LeaseList, error) { return c.MGetLease(ctx, k, k, "allocs:lf:missing") }},
		{"HMGetLease", func() (*respire.LeaseList, error) { return c.HMGetLease(ctx, h, "f", "g") }},
		{"LRangeLease", func() (*respire.LeaseList, error) { return c.LRangeLease(ctx, l, 0, -1) }},
	} {
		check(list.name, 0, func() {
			var ll *respire.LeaseList
			ll, err = list.fn()
			ll.Release()
		})
	}
}
