package respire_test

import (
	"context"
	"fmt"
	"time"

	"github.com/respire-go/respire/respire"
)

// Subscribe returns once the server confirmed the subscription, so a
// message published afterwards is received.
func ExampleSubscription_Next() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, "ex:orders")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	if _, err := c.Publish(ctx, "ex:orders", "order 1 paid"); err != nil {
		fmt.Println(err)
		return
	}
	msg, err := sub.Next(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	if msg.Gap != nil { // messages may have been lost: resynchronize
		fmt.Println("gap:", msg.Gap)
		return
	}
	fmt.Println(msg.Channel, msg.Payload)
	// Output: ex:orders order 1 paid
}

// Pattern subscriptions say which pattern matched.
func ExampleClient_PSubscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	sub, err := c.PSubscribe(ctx, "ex:user:*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	c.Publish(ctx, "ex:user:42", "signed in")
	msg, err := sub.Next(ctx)
	fmt.Println(msg.Pattern, msg.Channel, msg.Payload, err)
	// Output: ex:user:* ex:user:42 signed in <nil>
}

// Messages suits a select beside other channels; it is closed when the
// subscription is.
func ExampleSubscription_Messages() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	sub := c.NewSubscription(&respire.SubscriptionOptions{Buffer: 16})
	defer sub.Close()
	if err := sub.Subscribe(ctx, "ex:alerts"); err != nil {
		fmt.Println(err)
		return
	}
	c.Publish(ctx, "ex:alerts", "disk full")
	select {
	case msg := <-sub.Messages():
		fmt.Println(msg.Payload)
	case <-ctx.Done():
		fmt.Println("no message:", ctx.Err())
	}
	// Output: disk full
}
