package harness

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAtomicMigrationFlavors(t *testing.T) {
	for f, want := range map[Flavor]bool{
		Redis70: false, Redis80: false, Valkey81: false, Redis86: true, Valkey91: true,
		"redis-8.4": true, "redis-8.2": false, "redis-9.0": true, "valkey-9.0": true, "other-9.9": false,
	} {
		assert.Equal(t, want, f.AtomicMigration(), f)
	}
}

// TestAtomicMigrationRefused: on a flavor without atomic migration,
// MigrateSlotsAtomic says so before it sends anything.
func TestAtomicMigrationRefused(t *testing.T) {
	c := &Cluster{Flavor: Redis80, t: t}
	a, b := &ClusterNode{Addr: "a"}, &ClusterNode{Addr: "b"}
	err := c.MigrateSlotsAtomic(context.Background(), a, b, []int{0})
	require.ErrorIs(t, err, ErrNoAtomicMigration)
	assert.Contains(t, err.Error(), "not redis-8.0")

	c.Flavor = Valkey91
	err = c.MigrateSlotsAtomic(context.Background(), a, b, []int{SlotCount})
	assert.ErrorContains(t, err, "slot 16384 is out of range")
	err = c.MigrateSlotsAtomic(context.Background(), a, a, []int{0})
	assert.ErrorContains(t, err, "to itself")
}

func TestSlotRanges(t *testing.T) {
	r, err := slotRanges([]int{5, 3, 4, 9, 0, 3, 16383})
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "0", "3", "5", "9", "9", "16383", "16383"}, r)
	r, err = slotRanges(nil)
	require.NoError(t, err)
	assert.Empty(t, r)
	_, err = slotRanges([]int{-1})
	assert.Error(t, err)
}
