package respire_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/respire-go/respire/respire"
)

// Batch.Do queues a command that has no typed method, or one written as
// words, beside the typed ones.
func ExampleBatch_Do() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	b := c.NewBatch()
	b.Set("ex:batchdo:n", "41", nil)
	raw := b.Do("INCRBY", "ex:batchdo:n", 1)
	typed := b.Get("ex:batchdo:n")
	if err := b.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	r, _ := raw.Result()
	n, err := r.Int64()
	fmt.Println(n, err, typed.Val())
	// Output: 42 <nil> 42
}

// Each command of a batch keeps its own outcome: one failing command does
// not fail the batch or the commands around it.
func ExampleFuture_Result() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Set(ctx, "ex:future:text", "not a number", nil)
	c.Del(ctx, "ex:future:missing")
	b := c.NewBatch()
	bad := b.Incr("ex:future:text")
	missing := b.Get("ex:future:missing")
	good := b.Incr("ex:future:counter")
	fmt.Println("exec:", b.Exec(ctx))

	var serr *respire.Error
	_, err = bad.Result()
	fmt.Println(errors.As(err, &serr), serr.Prefix)
	fmt.Println(err)
	_, err = missing.Result()
	fmt.Println(errors.Is(err, respire.Nil))
	fmt.Println(good.Err())
	// Output:
	// exec: <nil>
	// true ERR
	// respire: INCR: ERR value is not an integer or out of range
	// true
	// <nil>
}

// A batch runs once; queueing on it afterwards is an error.
func ExampleErrBatchDone() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	b := c.NewBatch()
	b.Ping()
	if err := b.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	late := b.Get("ex:batchdone:key")
	fmt.Println(errors.Is(late.Err(), respire.ErrBatchDone))
	// Output: true
}

// Tx.Do queues any command inside MULTI/EXEC.
func ExampleTx_Do() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:txdo:list")
	tx := c.NewTx()
	tx.Do("RPUSH", "ex:txdo:list", "a", "b", "c")
	length := tx.Do("LLEN", "ex:txdo:list")
	if err := tx.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	r, _ := length.Result()
	fmt.Println(r.Int64())
	// Output: 3 <nil>
}

// Watch runs fn once with WATCH on the keys: when another client changes
// one of them before EXEC, nothing is applied and the error matches
// TxFailed. WatchRetry runs fn again instead.
func ExampleClient_Watch() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Set(ctx, "ex:watch:stock", "5", nil)
	err = c.Watch(ctx, func(tx *respire.Tx) error {
		s, err := c.Get(ctx, "ex:watch:stock")
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		// Someone else takes one meanwhile:
		c.Decr(ctx, "ex:watch:stock")
		tx.Set("ex:watch:stock", strconv.Itoa(n-1), nil)
		return nil
	}, "ex:watch:stock")
	fmt.Println(errors.Is(err, respire.TxFailed))
	left, _ := c.Get(ctx, "ex:watch:stock")
	fmt.Println(left)
	// Output:
	// true
	// 4
}

// A command the server rejects while queueing aborts the whole
// transaction; its Future holds the server's reason.
func ExampleTxAbortedError() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	tx := c.NewTx()
	tx.Set("ex:txabort:a", "1", nil)
	bad := tx.Do("NOSUCHCOMMAND")
	err = tx.Exec(ctx)
	var aborted *respire.TxAbortedError
	fmt.Println(errors.As(err, &aborted), aborted.Rejected)
	var serr *respire.Error
	fmt.Println(errors.As(bad.Err(), &serr), serr.Command, serr.Prefix)
	fmt.Println(aborted.Err.Command, aborted.Err.Prefix)
	n, _ := c.Exists(ctx, "ex:txabort:a")
	fmt.Println(n) // nothing was applied
	// Output:
	// true 1
	// true NOSUCHCOMMAND ERR
	// EXEC EXECABORT
	// 0
}

// WAIT counts the replicas that acknowledged the writes of the connection
// it runs on, so it goes in the Batch that makes the writes: the batch runs
// whole on one connection. Sent by itself on the Client it would run on a
// connection without them, and is refused.
func ExampleBatch_Wait() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	b := c.NewBatch()
	b.Set("ex:wait:order", "paid", nil)
	acks := b.Wait(0, 100*time.Millisecond) // this server has no replica
	if err := b.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(acks.Result())

	_, err = c.Wait(ctx, 1, 100*time.Millisecond)
	var ae *respire.ArgError
	fmt.Println(errors.As(err, &ae), ae.Command, errors.Is(err, respire.ErrNotSent))
	// Output:
	// 0 <nil>
	// true WAIT true
}
