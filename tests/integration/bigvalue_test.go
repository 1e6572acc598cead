package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Large values: from transport.DirectPayload bytes on, an argument is
// written from the caller's memory instead of being copied into the
// command (respire/bigarg.go), and a large reply is read in place.

// bigSizes are the value sizes around and far above the threshold.
var bigSizes = []int{
	transport.DirectPayload - 1,
	transport.DirectPayload,
	transport.DirectPayload + 1,
	1 << 20,
	8 << 20,
}

// binaryValue returns n pseudo-random bytes (CR, LF and NUL included),
// different for every seed.
func binaryValue(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n:n]
}

// TestLargeValuesRoundTrip: values of every size round the threshold go
// out and come back byte for byte through every form that sends them:
// string and []byte arguments, arguments after the large one, several
// large ones in one command, batches, transactions and leased replies.
func TestLargeValuesRoundTrip(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, mode := range modes[:2] {
		t.Run(mode.name, func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode.readMode})
			ctx := ctxT(t)
			for i, n := range bigSizes {
				val := binaryValue(n, uint64(i))
				k := fmt.Sprintf("%s:%s:%d", t.Name(), mode.name, n)

				// A string value, with an argument after it.
				require.NoError(t, c.Set(ctx, k, string(val), &respire.SetOptions{EX: time.Hour}))
				got, err := c.Get(ctx, k)
				require.NoError(t, err)
				require.True(t, bytes.Equal(val, []byte(got)), "GET of %d bytes after SET (%d bytes back)", n, len(got))
				ttl, err := c.TTL(ctx, k)
				require.NoError(t, err)
				assert.Greater(t, ttl, time.Minute, "EX after the value was sent")

				// A []byte value through Do, read back leased and appended.
				other := binaryValue(n, uint64(i)+100)
				_, err = c.Do(ctx, "SET", k, other)
				require.NoError(t, err)
				l, err := c.GetLease(ctx, k)
				require.NoError(t, err)
				require.True(t, bytes.Equal(other, l.Bytes()), "leased GET of %d bytes", n)
				l.Release()
				dst, err := c.GetAppend(ctx, []byte("prefix"), k)
				require.NoError(t, err)
				require.True(t, bytes.Equal(append([]byte("prefix"), other...), dst), "appended GET of %d bytes", n)

				// Two large values and a small one in one command.
				k2, k3 := k+":2", k+":3"
				require.NoError(t, c.MSet(ctx,
					respire.KeyValue{Key: k, Value: string(val)},
					respire.KeyValue{Key: k2, Value: "small"},
					respire.KeyValue{Key: k3, Value: string(other)}))
				vs, err := c.MGet(ctx, k, k2, k3)
				require.NoError(t, err)
				require.Len(t, vs, 3)
				require.True(t, bytes.Equal(val, []byte(vs[0].V)), "MGET [0] of %d bytes", n)
				assert.Equal(t, "small", vs[1].V)
				require.True(t, bytes.Equal(other, []byte(vs[2].V)), "MGET [2] of %d bytes", n)

				// A batch and a transaction.
				b := c.NewBatch()
				b.Set(k2, string(other), nil)
				bg := b.Get(k2)
				require.NoError(t, b.Exec(ctx))
				require.True(t, bytes.Equal(other, []byte(bg.Val())), "batch GET of %d bytes", n)
				tx := c.NewTx()
				tx.Set(k3, string(val), nil)
				tg := tx.Get(k3)
				require.NoError(t, tx.Exec(ctx))
				require.True(t, bytes.Equal(val, []byte(tg.Val())), "transaction GET of %d bytes", n)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestLargeAndSmallCommandsOneConnection: large SETs and GETs share one
// connection with a stream of small commands from other goroutines;
// every reply is the one its caller asked for.
func TestLargeAndSmallCommandsOneConnection(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, Connections: 1})
	ctx := ctxT(t)
	const big, small, rounds = 4, 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, big+small)
	for g := range big {
		wg.Go(func() {
			k := fmt.Sprintf("%s:big:%d", t.Name(), g)
			for i := range rounds {
				val := binaryValue(bigSizes[(g+i)%len(bigSizes[:4])]+i, uint64(g*1000+i))
				var err error
				if i%2 == 0 {
					err = c.Set(ctx, k, string(val), nil)
				} else {
					_, err = c.Do(ctx, "SET", k, val)
				}
				if err != nil {
					errs <- err
					return
				}
				got, err := c.Get(ctx, k)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(val, []byte(got)) {
					errs <- fmt.Errorf("big %d round %d: %d bytes sent, %d other bytes back", g, i, len(val), len(got))
					return
				}
			}
		})
	}
	for g := range small {
		wg.Go(func() {
			k := fmt.Sprintf("%s:n:%d", t.Name(), g)
			for i := range rounds * 20 {
				n, err := c.Incr(ctx, k)
				if err != nil {
					errs <- err
					return
				}
				if n != int64(i+1) {
					errs <- fmt.Errorf("small %d: INCR %d returned %d", g, i+1, n)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// gate stalls the proxy's reading from the client once armed and 1 MiB
// has passed, until released: a large write is then in progress, and stays
// so, the sockets' buffers full.
type gate struct {
	mu       sync.Mutex
	got      int
	blocked  chan struct{}
	released chan struct{}
}

func newGate() *gate { return &gate{blocked: make(chan struct{}), released: make(chan struct{})} }

func (g *gate) see(n int) {
	g.mu.Lock()
	g.got += n
	stall := g.got >= 1<<20
	if stall {
		select {
		case <-g.blocked:
		default:
			close(g.blocked)
		}
	}
	g.mu.Unlock()
	if stall {
		<-g.released
	}
}

// TestCancelledLargeSet: a caller cancels a large SET while the network
// holds its bytes, then overwrites its buffer at once. The call returns
// promptly; no write reads the buffer after the call returned, yet the
// connection is not broken: the rest of the write is copied and goes on,
// so the server ends up with the value as it was at the call, and the
// other callers on the connection never notice.
func TestCancelledLargeSet(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	// No stall detection during the test: only the cancellation may end
	// the calls.
	c := connect(t, respire.Options{Addr: p.Addr(), Connections: 1, StallTimeout: time.Hour})
	// One context for the subtests, each writing 48 MiB several times: on
	// a loaded machine with the race detector they take tens of seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	direct := connect(t, respire.Options{Addr: srv.Addr})
	// Far larger than the sockets' buffers, so that the write is still in
	// progress when the caller leaves.
	const size = 48 << 20

	// stored reads what the server holds at k: the value, or nil.
	stored := func(k string) []byte {
		v, err := direct.Get(ctx, k)
		if errors.Is(err, respire.Nil) {
			return nil
		}
		require.NoError(t, err)
		return []byte(v)
	}
	var cur atomic.Pointer[gate]
	p.OnClientData(func(_ int, b []byte) {
		if g := cur.Load(); g != nil {
			g.see(len(b))
		}
	})
	// held waits until g holds a write, failing the test should the call
	// writing it (done) end first.
	held := func(t *testing.T, g *gate, done <-chan error) {
		t.Helper()
		select {
		case <-g.blocked:
		case err := <-done:
			t.Fatalf("the call ended before the network held its write: %v", err)
		}
	}
	arm := func(t *testing.T) *gate {
		g := newGate()
		cur.Store(g)
		t.Cleanup(func() {
			cur.Store(nil)
			select {
			case <-g.released:
			default:
				close(g.released)
			}
		})
		return g
	}

	// cutWhileWriting runs exec (which writes val to k) until the write is
	// in progress and stuck, cancels it, overwrites val at once and lets
	// the network go: the rest of the write went on from a copy, on the
	// same connection, and the server holds val as it was at the call.
	cutWhileWriting := func(t *testing.T, k string, val []byte, exec func(context.Context) error) {
		orig := bytes.Clone(val)
		g := arm(t)
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- exec(cctx) }()
		held(t, g, done)
		// Another caller's command, queued behind the stuck write.
		sends := c.Stats().Sends
		other := make(chan error, 1)
		go func() {
			n, err := c.Incr(ctx, k+":other")
			if err == nil && n != 1 {
				err = fmt.Errorf("INCR gave %d", n)
			}
			other <- err
		}()
		for c.Stats().Sends == sends {
			runtime.Gosched()
		}
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		for i := range val {
			val[i] = 'X'
		}
		cur.Store(nil)
		close(g.released)
		require.NoError(t, <-other, "another caller's command on the connection")
		// Sent on the same connection, so read after the SET.
		require.NoError(t, c.Set(ctx, k+":after", "ok", nil))
		got := stored(k)
		assert.True(t, bytes.Equal(orig, got), "k as it was at the call: %d bytes, %d differ", len(got), countDiff(orig, got))
		assert.Equal(t, 1, p.Accepted(), "the connection was replaced")
	}

	t.Run("own write in progress", func(t *testing.T) {
		k, val := t.Name(), binaryValue(size, 1)
		cutWhileWriting(t, k, val, func(cctx context.Context) error {
			_, err := c.Do(cctx, "SET", k, val)
			return err
		})
	})

	t.Run("UnsafeString write in progress", func(t *testing.T) {
		// The caller's bytes, passed as a string without a copy, are
		// written from its memory: the cancelled call returns only once
		// no write reads them.
		k, val := t.Name(), binaryValue(size, 5)
		cutWhileWriting(t, k, val, func(cctx context.Context) error {
			return c.Set(cctx, k, respire.UnsafeString(val), nil)
		})
	})

	t.Run("batch write in progress", func(t *testing.T) {
		k, val := t.Name(), binaryValue(size, 4)
		b := c.NewBatch()
		small := b.Set(k+":small", "x", nil)
		b.Do("SET", k, val)
		cutWhileWriting(t, k, val, b.Exec)
		assert.Error(t, small.Err(), "the batch's caller left before its replies")
		v, err := direct.Get(ctx, k+":small")
		require.NoError(t, err, "the batch was written whole")
		assert.Equal(t, "x", v)
	})

	t.Run("UnsafeString queued behind another write", func(t *testing.T) {
		// Cancelled while queued, the caller's bytes are copied before
		// the call returns, and the copy is written.
		ka, kb := t.Name()+":a", t.Name()+":b"
		aval := string(binaryValue(size, 6))
		bval := binaryValue(1<<20, 7)
		orig := bytes.Clone(bval)
		g := arm(t)
		adone := make(chan error, 1)
		go func() { adone <- c.Set(ctx, ka, aval, nil) }()
		held(t, g, adone)
		sends := c.Stats().Sends
		cctx, cancel := context.WithCancel(ctx)
		bdone := make(chan error, 1)
		go func() { bdone <- c.Set(cctx, kb, respire.UnsafeString(bval), nil) }()
		for c.Stats().Sends == sends {
			runtime.Gosched()
		}
		cancel()
		require.ErrorIs(t, <-bdone, context.Canceled)
		for i := range bval {
			bval[i] = 'X'
		}
		cur.Store(nil)
		close(g.released)
		require.NoError(t, <-adone)
		v, err := c.Get(ctx, kb)
		require.NoError(t, err)
		got := []byte(v)
		assert.True(t, bytes.Equal(orig, got), "b as it was at the call: %d bytes, %d differ", len(got), countDiff(orig, got))
	})

	t.Run("small command withdrawn", func(t *testing.T) {
		// Cancelled while its bytes wait behind another caller's write,
		// a command is withdrawn: it never runs, its error says it was
		// not sent, and the connection stays in step.
		ka, kb := t.Name()+":a", t.Name()+":b"
		aval := string(binaryValue(size, 8))
		g := arm(t)
		adone := make(chan error, 1)
		go func() { adone <- c.Set(ctx, ka, aval, nil) }()
		held(t, g, adone)
		sends := c.Stats().Sends
		cctx, cancel := context.WithCancel(ctx)
		bdone := make(chan error, 1)
		go func() {
			b := c.NewBatch()
			b.Incr(kb)
			b.Incr(kb)
			bdone <- b.Exec(cctx)
		}()
		for c.Stats().Sends == sends {
			runtime.Gosched()
		}
		cancel()
		err := <-bdone
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, respire.ErrNotSent)
		other := make(chan error, 1)
		go func() {
			n, err := c.Incr(ctx, kb+":other")
			if err == nil && n != 1 {
				err = fmt.Errorf("INCR gave %d", n)
			}
			other <- err
		}()
		cur.Store(nil)
		close(g.released)
		require.NoError(t, <-adone)
		require.NoError(t, <-other, "a command sent after the withdrawn ones")
		v, err := c.Exists(ctx, kb)
		require.NoError(t, err)
		assert.Zero(t, v, "the withdrawn INCRs ran")
		assert.Equal(t, 1, p.Accepted(), "the connection was replaced")
	})

	t.Run("queued behind another write", func(t *testing.T) {
		ka, kb := t.Name()+":a", t.Name()+":b"
		aval := string(binaryValue(size, 2))
		bval := binaryValue(1<<20, 3)
		orig := bytes.Clone(bval)
		g := arm(t)
		adone := make(chan error, 1)
		go func() { adone <- c.Set(ctx, ka, aval, nil) }()
		held(t, g, adone) // a's write is in progress, and stuck
		sends := c.Stats().Sends
		cctx, cancel := context.WithCancel(ctx)
		bdone := make(chan error, 1)
		go func() { _, err := c.Do(cctx, "SET", kb, bval); bdone <- err }()
		for c.Stats().Sends == sends { // b is queued
			runtime.Gosched()
		}
		cancel()
		require.ErrorIs(t, <-bdone, context.Canceled)
		for i := range bval {
			bval[i] = 'X'
		}
		cur.Store(nil)
		close(g.released)
		require.NoError(t, <-adone, "a is written whole, b after it from a copy")
		// Read on the same connection, so after b's SET.
		v, err := c.Get(ctx, kb)
		require.NoError(t, err)
		got := []byte(v)
		assert.True(t, bytes.Equal(orig, got), "b as it was at the call: %d bytes, %d differ", len(got), countDiff(orig, got))
		assert.Len(t, stored(ka), size)
	})
}

func countDiff(a, b []byte) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}
