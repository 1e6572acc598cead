package respire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/topology"
)

// TestReadFromRoutes: every ReadFrom mode maps to the topology's mode of
// the same name.
func TestReadFromRoutes(t *testing.T) {
	want := map[ReadFrom]topology.ReadFrom{
		ReadPrimary: topology.ReadPrimary, ReadPreferReplica: topology.ReadPreferReplica,
		ReadReplica: topology.ReadReplica, ReadNearest: topology.ReadNearest,
		ReadZoneReplica: topology.ReadZoneReplica, ReadZone: topology.ReadZone,
	}
	for r := ReadPrimary; r <= ReadZone; r++ {
		got, ok := want[r]
		require.True(t, ok, "mode %d is listed", r)
		assert.Equal(t, got, r.route(), "mode %d", r)
	}
}
