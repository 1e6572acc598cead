package respire_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/respire-go/respire/respire"
)

// A fake for unit tests: the interceptor answers GET itself, so code
// under test runs without a server. NewClient does not connect; nothing
// is dialed as long as every command is answered.
func ExampleInterceptor_fake() {
	fake := respire.Interceptor{
		Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
			if cmd.Name() == "GET" {
				return cmd.Reply(respire.CannedString("from the fake"))
			}
			return cmd.Reply(respire.CannedError("ERR not faked"))
		},
	}
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379", Interceptors: []respire.Interceptor{fake}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	v, err := c.Get(context.Background(), "greeting")
	fmt.Println(v, err)
	_, err = c.Incr(context.Background(), "n")
	fmt.Println(err)
	// Output:
	// from the fake <nil>
	// respire: INCR: ERR not faked
}

// A load shedder: at most 100 commands in flight; the rest fail at once
// with the interceptor's own error, without being sent.
func ExampleInterceptor_limit() {
	var inFlight atomic.Int64
	errBusy := errors.New("too many commands in flight")
	limit := respire.Interceptor{
		Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
			if inFlight.Add(1) > 100 {
				inFlight.Add(-1)
				return errBusy
			}
			defer inFlight.Add(-1)
			return next(ctx, cmd)
		},
	}
	_, _ = respire.NewClient(respire.Options{Addr: "localhost:6379", Interceptors: []respire.Interceptor{limit}})
}
