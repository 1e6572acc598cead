package respire

import (
	"context"
	"errors"
)

// Batch is an explicit pipeline: commands queued on it are sent together,
// in one write, when Exec is called, and their replies are read in one go.
// Every command method of Client has a Batch twin that takes the same
// arguments (without ctx) and returns a *Future for its typed result:
//
//	b := client.NewBatch()
//	n := b.Incr("hits")
//	v := b.Get("greeting")
//	if err := b.Exec(ctx); err != nil { ... } // the batch as a whole failed
//	hits, err := n.Result()                   // each command has its own outcome
//
// A Batch is not safe for concurrent use, and is used once: Exec a second
// time returns ErrBatchDone.
type Batch struct {
	c    *Client
	cmds []*cmd
	futs []settler
	done bool
}

// NewBatch returns an empty batch that runs on c.
func (c *Client) NewBatch() *Batch { return &Batch{c: c} }

// Len is the number of commands queued.
func (b *Batch) Len() int { return len(b.cmds) }

// ErrNotExecuted is the error of a Future whose batch has not run yet.
var ErrNotExecuted = errors.New("respire: batch not executed yet")

// ErrBatchDone is returned by Exec on a batch that already ran.
var ErrBatchDone = errors.New("respire: batch already executed")

// Exec sends the queued commands and waits for all their replies. It
// returns an error only when the batch as a whole failed: an invalid
// argument in any command (then nothing is sent), the context, or the
// connection. Replies of the server, errors included, are in each
// command's Future; a null is Nil there, never an error of Exec.
func (b *Batch) Exec(ctx context.Context) error {
	if b.done {
		return ErrBatchDone
	}
	b.done = true
	cmds, futs := b.cmds, b.futs
	b.cmds, b.futs = nil, nil
	for _, x := range cmds {
		if x.argErr != nil {
			err := x.argErr
			for i, y := range cmds {
				futs[i].settle(nil, err)
				y.Recycle()
			}
			return err
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if err := b.c.execBatch(ctx, cmds); err != nil {
		for _, f := range futs {
			f.settle(nil, err)
		}
		return err
	}
	for i, x := range cmds {
		futs[i].settle(&x.res, withCommand(x.info, x.replyErr))
		b.c.release(x)
	}
	return nil
}

// newCmd takes a command for b.
func (b *Batch) newCmd(info *cmdInfo) *cmd { return b.c.newCmd(info) }

// queue adds x, decoded by dec, and returns its future.
func queue[T any](b *Batch, x *cmd, dec decoder, pick func(*result) T) *Future[T] {
	f := &Future[T]{pick: pick}
	if b.done {
		f.err = ErrBatchDone
		f.done = true
		x.Recycle()
		return f
	}
	x.dec = dec
	b.cmds = append(b.cmds, x)
	b.futs = append(b.futs, f)
	return f
}

// settler is a Future of any type.
type settler interface {
	settle(r *result, err error)
}

// Future is the deferred result of a command queued on a Batch. It is set
// when the batch's Exec returns.
type Future[T any] struct {
	val  T
	err  error
	done bool
	pick func(*result) T
}

func (f *Future[T]) settle(r *result, err error) {
	f.done = true
	if err != nil {
		f.err = err
		return
	}
	f.val = f.pick(r)
}

// Result returns the command's value and error, as the Client method of the
// same command would have; ErrNotExecuted before the batch ran.
func (f *Future[T]) Result() (T, error) {
	if !f.done {
		var zero T
		return zero, ErrNotExecuted
	}
	return f.val, f.err
}

// Val returns the value, the zero value when Err is not nil.
func (f *Future[T]) Val() T {
	v, _ := f.Result()
	return v
}

// Err returns the command's error.
func (f *Future[T]) Err() error {
	_, err := f.Result()
	return err
}
