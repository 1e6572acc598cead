package respire

import (
	"strconv"
)

// Availability zones: ReadZoneReplica and ReadZone with
// Options.AvailabilityZone. On a cluster the choice of node is
// topology.Cluster's (internal/topology/zones.go); on Sentinel it is
// replicaPick's, over the replicas' zones from HELLO
// (topology.Replicas).

// validateZone checks that AvailabilityZone and the zone read modes come
// together.
func (o *Options) validateZone() error {
	zoned := o.ReadFrom == ReadZoneReplica || o.ReadFrom == ReadZone
	switch {
	case zoned && o.AvailabilityZone == "":
		return optErr("AvailabilityZone", "empty, but ReadFrom %s routes reads by the client's zone: name it", readFromName(o.ReadFrom))
	case !zoned && o.AvailabilityZone != "":
		return optErr("AvailabilityZone", "%q given, but ReadFrom %s ignores zones: use ReadZoneReplica or ReadZone", o.AvailabilityZone, readFromName(o.ReadFrom))
	}
	return nil
}

// readFromName is rf's name, for errors.
func readFromName(rf ReadFrom) string {
	switch rf {
	case ReadPrimary:
		return "ReadPrimary"
	case ReadPreferReplica:
		return "ReadPreferReplica"
	case ReadReplica:
		return "ReadReplica"
	case ReadNearest:
		return "ReadNearest"
	case ReadZoneReplica:
		return "ReadZoneReplica"
	case ReadZone:
		return "ReadZone"
	}
	return "mode " + strconv.Itoa(int(rf))
}
