//go:build !race && !respire_leasecheck

package respire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Without the race detector or the respire_leasecheck tag, misuse is
// ignored rather than panicking in production code, and a released Lease
// is pooled as it is.
func TestLeaseChecksOffInNormalBuilds(t *testing.T) {
	assert.False(t, leaseChecks)
	l := getLease(4)
	l.Release()
	assert.NotPanics(t, l.Release)
	assert.NotPanics(t, func() { l.Bytes() })
	assert.Empty(t, l.releasedAt, "no caller lookup on the hot path")
}
