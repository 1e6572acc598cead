package ratelimit_test

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/ratelimit"
	"github.com/respire-go/respire/respire"
)

// Ten requests a second per user, in bursts of up to twenty.
func Example() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	limiter, err := ratelimit.New(c, ratelimit.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := limiter.Allow(ctx, "user:42", ratelimit.PerSecond(10, 20))
	if err != nil {
		fmt.Println(err)
		return
	}
	if !res.Allowed {
		fmt.Println("slow down; retry in", res.RetryAfter)
		return
	}
	fmt.Println("go ahead;", res.Remaining, "left in the burst")
}

// The emission interval of a limit: one request every 100ms.
func ExampleLimit_Interval() {
	fmt.Println(ratelimit.PerSecond(10, 5).Interval())
	fmt.Println(ratelimit.PerMinute(7, 1).Interval())
	// Output:
	// 100ms
	// 8.571428s
}
