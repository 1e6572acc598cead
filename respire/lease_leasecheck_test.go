//go:build respire_leasecheck

package respire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With the respire_leasecheck tag the misuse checks are on without the
// race detector: a second Release and a use after Release panic, naming
// the misuse and where the first Release was.
func TestLeaseChecksOnWithTag(t *testing.T) {
	assert.True(t, leaseChecksBuild)
	assert.True(t, leaseChecks)

	l := getLease(4)
	l.b = append(l.b, "data"...)
	l.Release()
	assert.Contains(t, l.releasedAt, "lease_leasecheck_test.go:")
	assert.PanicsWithValue(t, "respire: Lease.Bytes called after Release (released at "+l.releasedAt+")", func() { l.Bytes() })
	assert.PanicsWithValue(t, "respire: Lease.Release called twice (released at "+l.releasedAt+")", l.Release)

	var r result
	require.NoError(t, decLeaseListNull(msg(t, "*2|$1|a|$-1|"), &r))
	v := r.Any.(*LeaseList)
	assert.Equal(t, "a", string(v.Bytes(0)))
	v.Release()
	assert.Contains(t, v.releasedAt, "lease_leasecheck_test.go:")
	assert.PanicsWithValue(t, "respire: LeaseList.Bytes called after Release (released at "+v.releasedAt+")", func() { v.Bytes(0) })
	assert.PanicsWithValue(t, "respire: LeaseList.Release called twice (released at "+v.releasedAt+")", v.Release)
}
