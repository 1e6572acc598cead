//go:build race

package respire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// In race builds the misuse checks are on without being asked for: a
// second Release and a use after Release panic, naming the misuse.
func TestLeaseChecksOnInRaceBuilds(t *testing.T) {
	assert.True(t, leaseChecks)
	l := getLease(4)
	l.b = append(l.b, "data"...)
	assert.Equal(t, "data", string(l.Bytes()))
	l.Release()
	assert.PanicsWithValue(t, "respire: Lease.Bytes called after Release (released at "+l.releasedAt+")", func() { l.Bytes() })
	assert.PanicsWithValue(t, "respire: Lease.Release called twice (released at "+l.releasedAt+")", l.Release)
	assert.Contains(t, l.releasedAt, "lease_race_test.go:")
}
