package respire_test

import (
	"context"
	"fmt"
	"time"

	"github.com/respire-go/respire/respire"
)

// A client of the master that three sentinels watch: it follows their
// failovers, and sends read-only commands to the master's replicas.
func ExampleSentinelOptions() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{
		Sentinel: &respire.SentinelOptions{
			MasterName: "mymaster",
			Addrs:      []string{"sentinel-1:26379", "sentinel-2:26379", "sentinel-3:26379"},
			Password:   "sentinel-secret", // the sentinels' own password
		},
		Password: "data-secret", // the master's and the replicas'
		ReadFrom: respire.ReadPreferReplica,
	})
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()
	fmt.Println("master:", c.SentinelMaster())
}

func ExampleParseURL_sentinel() {
	opts, err := respire.ParseURL("redis-sentinel://:data-secret@s1,s2:26380/mymaster/3?sentinel_password=s3cret&read_from=prefer_replica")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := opts.Sentinel
	fmt.Println(s.MasterName, s.Addrs, s.Password, opts.DB, opts.ReadFrom == respire.ReadPreferReplica)
	// Output: mymaster [s1:26379 s2:26380] s3cret 3 true
}
