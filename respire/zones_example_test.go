package respire_test

import (
	"context"
	"fmt"
	"time"

	"github.com/respire-go/respire/respire"
)

// A cluster client in zone us-east-1a: read-only commands go to a replica
// in that zone, else to the primary when it is there, else to a replica of
// another zone; writes go to the primaries. The nodes report their zones
// (Valkey 8.1 and later, configured with availability-zone).
func ExampleOptions_availabilityZone() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{
		Cluster:          &respire.ClusterOptions{Addrs: []string{"node-1:6379", "node-2:6379"}},
		ReadFrom:         respire.ReadZone,
		AvailabilityZone: "us-east-1a",
	})
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()
	v, err := c.Get(ctx, "greeting") // read from a node of us-east-1a when the shard has one
	fmt.Println(v, err)
}

// The same client from a URL.
func ExampleParseURL_availabilityZone() {
	opts, err := respire.ParseURL("valkey://node-1:6379?cluster=true&read_from=zone_replica&availability_zone=us-east-1a")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts.ReadFrom == respire.ReadZoneReplica, opts.AvailabilityZone)
	// Output: true us-east-1a
}
