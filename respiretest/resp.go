package respiretest

// A few commands to the nodes of a cluster or a Sentinel deployment, for
// setting them up and watching them, sent with testserver's RESP client on
// a connection of their own so that the client under test is never
// involved.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// requestTimeout bounds one command to one node, so that a stopped node
// cannot use up a whole wait.
const requestTimeout = 2 * time.Second

// do sends one command to addr on a new connection and returns its
// reply (see testserver.Conn).
func do(ctx context.Context, addr string, args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return testserver.Do(ctx, addr, args...)
}

// doString is do for a command whose reply is a string.
func doString(ctx context.Context, addr string, args ...string) (string, error) {
	r, err := do(ctx, addr, args...)
	if err != nil {
		return "", err
	}
	s, ok := r.(string)
	if !ok {
		return "", fmt.Errorf("%s on %s: a reply of type %T, not a string", strings.Join(args, " "), addr, r)
	}
	return s, nil
}

// poll is testserver.Poll, its error prefixed with the package's name.
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	if err := testserver.Poll(ctx, what, check); err != nil {
		return fmt.Errorf("respiretest: %w", err)
	}
	return nil
}
