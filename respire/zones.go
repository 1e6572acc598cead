package respire

import (
	"context"
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

// primaryReadsKey marks a context made by PrimaryReads.
type primaryReadsKey struct{}

// PrimaryReads returns a context under which read-only commands go to a
// primary, whatever Options.ReadFrom says (on a cluster, and on a Sentinel
// client that reads from replicas): for reads that must see every write
// acknowledged before them. A replica may lag behind its primary. The
// reads in a Watch's function are such reads: a value read from a replica
// may predate the WATCH, and the EXEC would not notice that the
// transaction was computed from it.
func PrimaryReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryReadsKey{}, true)
}

// primaryReads reports whether ctx was made by PrimaryReads.
func primaryReads(ctx context.Context) bool {
	on, _ := ctx.Value(primaryReadsKey{}).(bool)
	return on
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
