package integration

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errOpen is what the breaker below answers with while open.
var errOpen = errors.New("breaker open")

// breaker is a small circuit breaker built on an Interceptor: it opens
// after failures in a row and then answers every command and batch itself,
// without sending anything.
type breaker struct {
	mu       sync.Mutex
	failures int
	open     bool
	names    []string // commands that went through, in order
}

func (b *breaker) interceptor() respire.Interceptor {
	return respire.Interceptor{
		Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
			b.mu.Lock()
			open := b.open
			b.mu.Unlock()
			if open {
				return errOpen
			}
			err := next(ctx, cmd)
			b.mu.Lock()
			defer b.mu.Unlock()
			b.names = append(b.names, cmd.Name())
			var conn *respire.ConnError
			if errors.As(err, &conn) || errors.Is(err, respire.ErrNotSent) {
				b.failures++
				b.open = b.failures >= 2
			} else {
				b.failures = 0
			}
			return err
		},
		Batch: func(ctx context.Context, bc respire.BatchCall, next respire.BatchFunc) error {
			b.mu.Lock()
			open := b.open
			b.mu.Unlock()
			if open {
				return errOpen
			}
			return next(ctx, bc)
		},
	}
}

// TestInterceptorCircuitBreaker: an interceptor sees every command with
// its name and outcome, passes them on, and once the server is gone
// answers them itself with its own error: the caller gets that error, and
// nothing more is sent.
func TestInterceptorCircuitBreaker(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	br := &breaker{}
	c := connect(t, respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{br.interceptor()}})
	ctx := ctxT(t)

	require.NoError(t, c.Set(ctx, "ic:k", "v", nil))
	v, err := c.Get(ctx, "ic:k")
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	_, err = c.Get(ctx, "ic:missing")
	assert.ErrorIs(t, err, respire.Nil, "a null reply passes through as Nil")
	r, err := c.Do(ctx, "ECHO", "hi")
	require.NoError(t, err)
	s, _ := r.Text()
	assert.Equal(t, "hi", s)
	b := c.NewBatch()
	f := b.Incr("ic:n")
	require.NoError(t, b.Exec(ctx))
	n, err := f.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	br.mu.Lock()
	assert.Equal(t, []string{"SET", "GET", "GET", "ECHO"}, br.names, "single commands go through Command; batches through Batch")
	br.mu.Unlock()

	srv.Stop()
	for i := 0; i < 2; i++ {
		// By default a command waits for the reconnect until its context
		// ends: a short one gives the failure without waiting a minute.
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := c.Get(cctx, "ic:k")
		cancel()
		require.Error(t, err)
	}
	_, err = c.Get(ctx, "ic:k")
	assert.ErrorIs(t, err, errOpen, "the breaker answers once open")
	b = c.NewBatch()
	f = b.Incr("ic:n")
	assert.ErrorIs(t, b.Exec(ctx), errOpen)
	_, err = f.Result()
	assert.ErrorIs(t, err, errOpen, "every command of a batch answered with an error gets it")
}

// TestInterceptorFakeReplies: an interceptor answers commands itself, and
// the typed methods decode its replies as they would the server's; the
// rest pass through to the real server.
func TestInterceptorFakeReplies(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	fake := respire.Interceptor{
		Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
			args := cmd.Args().Strings()
			if cmd.Name() == "EXISTS" {
				return next(ctx, cmd)
			}
			if len(args) == 2 && args[1] == "fake:str" {
				return cmd.Reply(respire.CannedString("canned"))
			}
			if len(args) == 2 && args[1] == "fake:int" {
				return cmd.Reply(respire.CannedInt(42))
			}
			if len(args) == 2 && args[1] == "fake:nil" {
				return cmd.Reply(respire.CannedNil())
			}
			if len(args) == 2 && args[1] == "fake:err" {
				return cmd.Reply(respire.CannedError("WRONGTYPE not a string"))
			}
			return next(ctx, cmd)
		},
		Batch: func(ctx context.Context, bc respire.BatchCall, next respire.BatchFunc) error {
			if bc.Len() > 0 && bc.Command(0).Name() == "ECHO" {
				for i := 0; i < bc.Len(); i++ {
					if err := bc.Command(i).Reply(respire.CannedString("batch-canned")); err != nil {
						return err
					}
				}
				return nil
			}
			return next(ctx, bc)
		},
	}
	c := connect(t, respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{fake}})
	ctx := ctxT(t)

	v, err := c.Get(ctx, "fake:str")
	require.NoError(t, err)
	assert.Equal(t, "canned", v)
	n, err := c.Incr(ctx, "fake:int")
	require.NoError(t, err)
	assert.Equal(t, int64(42), n)
	_, err = c.Get(ctx, "fake:nil")
	assert.ErrorIs(t, err, respire.Nil)
	_, err = c.Get(ctx, "fake:err")
	var re *respire.Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "WRONGTYPE", re.Prefix)
	exists, err := c.Exists(ctx, "fake:str")
	require.NoError(t, err)
	assert.Zero(t, exists, "nothing was written: the server never saw the faked commands")

	b := c.NewBatch()
	e1, e2 := b.Echo("a"), b.Echo("b")
	require.NoError(t, b.Exec(ctx))
	for _, f := range []*respire.Future[string]{e1, e2} {
		s, err := f.Result()
		require.NoError(t, err)
		assert.Equal(t, "batch-canned", s)
	}
	tx := c.NewTx()
	inc := tx.Incr("fake:tx")
	require.NoError(t, tx.Exec(ctx), "a transaction passes through")
	got, err := inc.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), got)
}

// TestInterceptorMisuse: an interceptor that calls next twice, answers
// after next, or returns nil without an answer gets a clear error, and the
// command is not sent twice.
func TestInterceptorMisuse(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	var mode atomic.Int32
	ic := respire.Interceptor{
		Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
			switch mode.Load() {
			case 1: // next twice
				_ = next(ctx, cmd)
				return next(ctx, cmd)
			case 2: // Reply after next
				if err := next(ctx, cmd); err != nil {
					return err
				}
				return cmd.Reply(respire.CannedInt(1))
			case 3: // nothing
				return nil
			case 4: // a bad canned reply
				return cmd.Reply(respire.CannedMap(respire.CannedInt(1)))
			}
			return next(ctx, cmd)
		},
	}
	c := connect(t, respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{ic}})
	ctx := ctxT(t)
	for m := int32(1); m <= 4; m++ {
		mode.Store(m)
		_, err := c.Incr(ctx, "misuse:n")
		assert.ErrorIs(t, err, respire.ErrInterceptorMisuse, "mode %d: %v", m, err)
	}
	mode.Store(0)
	n, err := c.Get(ctx, "misuse:n")
	require.NoError(t, err)
	assert.Equal(t, "2", n, "INCR ran once in mode 1 and once in mode 2, never twice")
}

// TestInterceptorDial: a Dial interceptor sees every connection the client
// opens, data and pub/sub alike, around the default dialer, and can refuse
// one.
func TestInterceptorDial(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	var dials atomic.Int32
	var refuse atomic.Bool
	ic := respire.Interceptor{
		Dial: func(ctx context.Context, network, addr string, next respire.DialFunc) (net.Conn, error) {
			dials.Add(1)
			if refuse.Load() {
				return nil, errors.New("dial refused by policy")
			}
			return next(ctx, network, addr)
		},
	}
	c := connect(t, respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{ic}})
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "dial:k", "v", nil))
	before := dials.Load()
	assert.Positive(t, before)
	sub, err := c.Subscribe(ctx, "dial:ch")
	require.NoError(t, err)
	defer sub.Close()
	assert.Greater(t, dials.Load(), before, "the pub/sub connection was dialed through the interceptor")

	refuse.Store(true)
	c2, err := respire.NewClient(respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{ic}})
	require.NoError(t, err)
	defer c2.Close()
	// The Ping waits for a connection until its context ends (the
	// default), then names the last dial's error: 2s is many dials.
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = c2.Ping(pctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dial refused by policy")
}

// TestInterceptorsOrder: the first interceptor wraps the others, and each
// runs once per command.
func TestInterceptorsOrder(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	var mu sync.Mutex
	var order []string
	mk := func(name string) respire.Interceptor {
		return respire.Interceptor{Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
			mu.Lock()
			order = append(order, name+">")
			mu.Unlock()
			err := next(ctx, cmd)
			mu.Lock()
			order = append(order, "<"+name)
			mu.Unlock()
			return err
		}}
	}
	c := connect(t, respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{mk("a"), mk("b")}})
	_, err := c.Ping(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, []string{"a>", "b>", "<b", "<a"}, order)
}

// TestInterceptedAllocations: with a pass-through interceptor on commands
// and batches, the hot paths keep their allocation targets: composing the
// chain is done once, at NewClient.
func TestInterceptedAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	srv := harness.Start(t, harness.Config{})
	pass := respire.Interceptor{
		Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error { return next(ctx, cmd) },
		Batch:   func(ctx context.Context, b respire.BatchCall, next respire.BatchFunc) error { return next(ctx, b) },
	}
	for _, cx := range allocContexts(t) {
		t.Run(cx.name, func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, Interceptors: []respire.Interceptor{pass, pass}})
			hotPathAllocs(t, c, cx.ctx)
		})
	}
}
