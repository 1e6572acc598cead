package respire_test

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/respire"
)

// A cluster client subscribes each sharded channel on the primary that
// owns its slot; when the slot moves, the channel follows it and a
// GapMoved marker names it. The subscription's buffer is bounded in bytes.
func ExampleClient_SSubscribe() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{
		Cluster:           &respire.ClusterOptions{Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000"}},
		PubSubBufferBytes: 32 << 20, // room for a reader that stalls longer
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sub, err := c.SSubscribe(ctx, "orders:{eu}", "orders:{us}")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	for {
		msg, err := sub.Next(ctx)
		if err != nil {
			return
		}
		switch {
		case msg.Gap != nil && msg.Gap.Reason == respire.GapMoved:
			fmt.Println("resync", msg.Channel, "after its slot moved")
		case msg.Gap != nil:
			fmt.Println("resync everything:", msg.Gap.Reason, msg.Gap.Dropped)
		default:
			fmt.Println(msg.Channel, msg.Payload)
		}
	}
}
