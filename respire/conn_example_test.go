package respire_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/respire-go/respire/respire"
)

// Commands that change the state of the connection they run on are
// refused on the client's shared connections, with the safe way named.
func ExampleClient_Do_refused() {
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.Do(context.Background(), "SELECT", 1)
	var ae *respire.ArgError
	fmt.Println(errors.As(err, &ae), errors.Is(err, respire.ErrNotSent))
	// Output: true true
}

// WithConn lends a connection of the caller's own, on which SELECT,
// MONITOR, CLIENT REPLY and the like are allowed; it is closed afterwards.
func ExampleClient_WithConn() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	err = c.WithConn(ctx, func(conn *respire.Conn) error {
		if _, err := conn.Do(ctx, "SELECT", 3); err != nil {
			return err
		}
		n, err := conn.Do(ctx, "DBSIZE")
		if err != nil {
			return err
		}
		fmt.Println(n.Int64())
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}

// Whether a failed command may have run decides whether it is safe to
// send again.
func ExampleErrNotSent() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.IncrBy(ctx, "stock", -1)
	switch {
	case err == nil:
	case errors.Is(err, respire.ErrNotSent):
		// Certainly not applied: trying again cannot apply it twice.
	default:
		// May have been applied: check before trying again.
	}
}
