package testserver

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// defaultWait bounds a Poll whose context has no deadline.
const defaultWait = 30 * time.Second

// Poll calls check, backing off from 10ms to 100ms, until it returns nil
// or ctx ends; without a deadline in ctx it gives up after defaultWait.
// The error says what was awaited and the last error of check. A check
// that returns an error made by Permanent ends the wait at once with
// that error's cause.
func Poll(ctx context.Context, what string, check func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultWait)
		defer cancel()
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := check(ctx)
		if err == nil {
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return fmt.Errorf("%s: %w", what, perm.err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// Permanent wraps err so that Poll gives up at once: waiting longer
// cannot help.
func Permanent(err error) error { return &permanentError{err} }

// permanentError ends a Poll at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
