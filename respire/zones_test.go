package respire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The zone modes need a zone, a zone needs a zone mode, and the errors say
// which field is wrong and why.
func TestAvailabilityZoneOptions(t *testing.T) {
	cluster := &ClusterOptions{Addrs: []string{"127.0.0.1:1"}}
	for _, tc := range []struct {
		opts Options
		want string // "" when valid
	}{
		{Options{Cluster: cluster, ReadFrom: ReadZone, AvailabilityZone: "a"}, ""},
		{Options{Cluster: cluster, ReadFrom: ReadZoneReplica, AvailabilityZone: "a"}, ""},
		{Options{Cluster: cluster, ReadFrom: ReadZone}, "ReadFrom ReadZone routes reads by the client's zone"},
		{Options{Cluster: cluster, ReadFrom: ReadZoneReplica}, "ReadZoneReplica routes reads"},
		{Options{Cluster: cluster, ReadFrom: ReadPreferReplica, AvailabilityZone: "a"}, `"a" given, but ReadFrom ReadPreferReplica ignores zones`},
		{Options{Cluster: cluster, AvailabilityZone: "a"}, "ReadPrimary ignores zones"},
		{Options{Cluster: cluster, ReadFrom: ReadZone + 1}, "unknown mode 6"},
	} {
		c, err := NewClient(tc.opts)
		if tc.want == "" {
			require.NoError(t, err)
			c.Close()
			continue
		}
		require.ErrorIs(t, err, ErrInvalidOption)
		assert.ErrorContains(t, err, tc.want)
	}
	o, err := ParseURL("redis://h:1?cluster=true&read_from=zone&availability_zone=eu-west-3b")
	require.NoError(t, err)
	assert.Equal(t, ReadZone, o.ReadFrom)
	assert.Equal(t, "eu-west-3b", o.AvailabilityZone)
	_, err = ParseURL("redis://h:1?read_from=zones")
	assert.ErrorContains(t, err, "zone_replica or zone")
}
