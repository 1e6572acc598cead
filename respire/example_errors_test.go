package respire_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/respire-go/respire/respire"
)

// A server's error reply is an *Error with the command it refused and its
// prefix, the first word of the message; its text names the command.
func ExampleError() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:error:list")
	c.RPush(ctx, "ex:error:list", "x")
	_, err = c.Get(ctx, "ex:error:list")
	var serr *respire.Error
	if errors.As(err, &serr) {
		fmt.Println(serr.Command, serr.Prefix)
	}
	fmt.Println(err)
	// Output:
	// GET WRONGTYPE
	// respire: GET: WRONGTYPE Operation against a key holding the wrong kind of value
}

// Nil is the one way a missing value is reported, by typed methods, Do and
// Futures alike.
func ExampleNil() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:nil:missing")
	_, err = c.HGet(ctx, "ex:nil:missing", "field")
	fmt.Println(errors.Is(err, respire.Nil))
	_, err = c.Do(ctx, "GET", "ex:nil:missing")
	fmt.Println(errors.Is(err, respire.Nil))
	// Output:
	// true
	// true
}

// Arguments the client can see are wrong are refused before anything is
// sent: the *ArgError names the command and the argument, and matches
// ErrNotSent.
func ExampleArgError() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	_, err = c.SetIf(ctx, "ex:argerror:k", "v", respire.SetIfCondition{NX: true, XX: true}, nil)
	var ae *respire.ArgError
	fmt.Println(errors.As(err, &ae), errors.Is(err, respire.ErrNotSent))
	fmt.Println(err)
	// Output:
	// true true
	// respire: SET: argument condition: only one of NX, XX, IFEQ, IFNE, IFDEQ, IFDNE may be set
}

// A wrong password is a *HandshakeError wrapping the server's *Error; it
// is permanent, returned at once rather than waited on like an outage.
func ExampleHandshakeError() {
	ctx := context.Background()
	_, err := respire.Connect(ctx, respire.Options{Addr: addr, Username: "nobody", Password: "wrong"})
	var he *respire.HandshakeError
	var serr *respire.Error
	fmt.Println(errors.As(err, &he), he != nil && he.Permanent())
	fmt.Println(errors.As(err, &serr), serr != nil && serr.Prefix == "WRONGPASS")
	fmt.Println(errors.Is(err, respire.ErrUnavailable))
	// Output:
	// true true
	// true true
	// false
}

// A client that is closed refuses every command with ErrClosed.
func ExampleErrClosed() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Close()
	_, err = c.Get(ctx, "ex:closed:k")
	fmt.Println(errors.Is(err, respire.ErrClosed), errors.Is(err, respire.ErrNotSent))
	// Output: true true
}
