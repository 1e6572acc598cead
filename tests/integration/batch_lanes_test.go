package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Batch connections (Options.BatchConnections, transport/lanes.go): a
// batch that finds its connection busy goes to a connection of its own.

// namedConns counts the server's connections named name.
func namedConns(t *testing.T, admin *respire.Client, name string) int {
	t.Helper()
	list, err := admin.ClientList(ctxT(t), nil)
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " name="+name+" ") {
			n++
		}
	}
	return n
}

// killNamed closes the server's connections named name, but the one with
// id keep (0: none), and returns how many it closed.
func killNamed(t *testing.T, admin *respire.Client, name string, keep int64) int {
	t.Helper()
	ctx := ctxT(t)
	list, err := admin.ClientList(ctx, nil)
	require.NoError(t, err)
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name="+name+" ") || strings.HasPrefix(line, fmt.Sprintf("id=%d ", keep)) {
			continue
		}
		id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
		_, err := admin.Do(ctx, "CLIENT", "KILL", "ID", id)
		require.NoError(t, err)
		killed++
	}
	return killed
}

// ownID is the id of the client's routed connection.
func ownID(t *testing.T, c *respire.Client) int64 {
	t.Helper()
	r, err := c.Do(ctxT(t), "CLIENT", "ID")
	require.NoError(t, err)
	id, err := r.Int64()
	require.NoError(t, err)
	return id
}

// batchUntil runs batches from g goroutines, each checking every value,
// until done reports true after a round of them (or a batch fails).
func batchUntil(ctx context.Context, c *respire.Client, keys, vals []string, g int, done func() bool) error {
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for i := range g {
		wg.Go(func() {
			for j := 0; !stop.Load(); j++ {
				if err := runBatch(ctx, c, keys, vals, i*41+j*7); err != nil {
					errs <- err
					stop.Store(true)
					return
				}
				if i == 0 && j%8 == 7 && done() {
					stop.Store(true)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return errors.Join(<-errs)
}

func TestBatchConnections(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	admin := connect(t, respire.Options{Addr: srv.Addr})
	keys, vals := seedBatchKeys(t, admin, t.Name())
	ctx := ctxT(t)

	t.Run("concurrent batches open them, up to the bound", func(t *testing.T) {
		for _, bound := range []int{1, 3} {
			name := fmt.Sprintf("lanes-%d", bound)
			c := connect(t, respire.Options{Addr: srv.Addr, ClientName: name, BatchConnections: bound})
			// Until every lane is up: each opens when batches find all
			// open ones busy.
			err := batchUntil(ctx, c, keys, vals, bound+3, func() bool {
				// Called on a batching goroutine: assert, not require.
				assert.LessOrEqual(t, c.PoolStats().Batch, bound)
				return c.PoolStats().Batch == bound
			})
			require.NoError(t, err)
			st := c.PoolStats()
			assert.Equal(t, 1, st.Multiplexed)
			assert.Equal(t, bound, st.Batch)
			assert.Equal(t, 1+bound, namedConns(t, admin, name), "the server's view")
			// The lanes carry batches: a round more keeps them in use and
			// checks every value on them.
			var rounds atomic.Int64
			require.NoError(t, batchUntil(ctx, c, keys, vals, bound+3, func() bool { return rounds.Add(1) > 20 }))
			assert.Equal(t, bound, c.PoolStats().Batch)
		}
	})

	t.Run("off", func(t *testing.T) {
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "lanes-off", NoBatchConnections: true})
		var rounds atomic.Int64
		require.NoError(t, batchUntil(ctx, c, keys, vals, 6, func() bool { return rounds.Add(1) > 40 }))
		assert.Equal(t, 0, c.PoolStats().Batch)
		assert.Equal(t, 1, namedConns(t, admin, "lanes-off"))
	})

	t.Run("one goroutine's batches share its connection", func(t *testing.T) {
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "lanes-seq"})
		for i := range 100 {
			require.NoError(t, runBatch(ctx, c, keys, vals, i))
		}
		assert.Equal(t, 0, c.PoolStats().Batch)
		assert.Equal(t, 1, namedConns(t, admin, "lanes-seq"))
	})

	t.Run("order of one goroutine across connections", func(t *testing.T) {
		// While others keep every connection busy, each goroutine writes
		// its own key in a batch and reads it back in the next one, which
		// may go to another connection: it must see its write.
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "lanes-order"})
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for g := range 6 {
			wg.Go(func() {
				key := fmt.Sprintf("%s:own:%d", t.Name(), g)
				for i := range 150 {
					w := c.NewBatch()
					for j := range 15 {
						w.Set(fmt.Sprintf("%s:pad:%d:%d", t.Name(), g, j), "x", nil)
					}
					w.Set(key, fmt.Sprint(i), nil)
					if err := w.Exec(ctx); err != nil {
						errs <- err
						return
					}
					r := c.NewBatch()
					var got *respire.Future[string]
					for j := range 16 {
						f := r.Get(key)
						if j == 15 {
							got = f
						}
					}
					if err := r.Exec(ctx); err != nil {
						errs <- err
						return
					}
					if v, err := got.Result(); err != nil || v != fmt.Sprint(i) {
						errs <- fmt.Errorf("read back %q, %v after writing %d", v, err, i)
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
		t.Logf("%d batch connections opened", c.PoolStats().Batch)
	})

	t.Run("killed lanes", func(t *testing.T) {
		// The server closes every connection of the client while batches
		// run on all of them: each batch has all its values right or
		// fails as a whole, and the lanes open again.
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "lanes-kill"})
		require.NoError(t, batchUntil(ctx, c, keys, vals, 6, func() bool { return c.PoolStats().Batch == respire.DefaultBatchConnections }))
		var stop atomic.Bool
		var failed, good atomic.Int64
		progress := make(chan struct{}, 1)
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for g := range 6 {
			wg.Go(func() {
				for i := 0; !stop.Load(); i++ {
					err := runBatch(ctx, c, keys, vals, g*13+i)
					switch {
					case errors.Is(err, errWrongReply) || ctx.Err() != nil:
						errs <- err
						return
					case err != nil:
						failed.Add(1)
					default:
						good.Add(1)
						select {
						case progress <- struct{}{}:
						default:
						}
					}
				}
			})
		}
		for range 3 {
			// Batches go through on the new connections first.
			for n := good.Load(); good.Load() < n+30; {
				select {
				case <-progress:
				case <-ctx.Done():
					t.Fatal("no batch succeeded after the kill")
				}
			}
			assert.Greater(t, killNamed(t, admin, "lanes-kill", 0), 1, "the lanes were open")
		}
		stop.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		t.Logf("%d batches succeeded, %d failed with their connection", good.Load(), failed.Load())
		// The routed connection, killed last while idle, is found closed
		// by the batch written on it (whose outcome is then unknown); the
		// lanes are checked before use, so batches on them never are.
		var err error
		for range 2 {
			if err = runBatch(ctx, c, keys, vals, 0); err == nil {
				break
			}
			require.NotErrorIs(t, err, errWrongReply)
		}
		require.NoError(t, err)
		require.NoError(t, batchUntil(ctx, c, keys, vals, 6, func() bool { return c.PoolStats().Batch > 0 }))
	})

	t.Run("idle lanes closed by the server", func(t *testing.T) {
		// Nothing reads an idle connection, so a close goes unseen until
		// it is used: a lane is checked before a batch is written on it,
		// and batches after the close all succeed.
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "lanes-idle"})
		require.NoError(t, batchUntil(ctx, c, keys, vals, 6, func() bool { return c.PoolStats().Batch == respire.DefaultBatchConnections }))
		killed := killNamed(t, admin, "lanes-idle", ownID(t, c))
		require.Equal(t, respire.DefaultBatchConnections, killed)
		var rounds atomic.Int64
		require.NoError(t, batchUntil(ctx, c, keys, vals, 6, func() bool { return rounds.Add(1) > 20 }))
		assert.Equal(t, 1, namedConns(t, admin, "lanes-idle")-c.PoolStats().Batch, "lanes dialed again")
	})

	t.Run("large replies: reads take lanes, writes keep their connection", func(t *testing.T) {
		// GETs of 1 MiB from several goroutines: the server writes 64 KiB
		// per turn to a connection, so while the routed connection carries
		// such replies, read-only commands that find it busy take lanes.
		// Single writes never do.
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "lanes-large"})
		big := strings.Repeat("0123456789abcdef", 1<<16)
		bigKey := t.Name() + ":big"
		require.NoError(t, c.Set(ctx, bigKey, big, nil))
		var stop atomic.Bool
		var reads atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				own := fmt.Sprintf("%s:w:%d", t.Name(), g)
				for i := 0; !stop.Load(); i++ {
					if g < 2 {
						// A writer: its SETs stay on the routed connection
						// and it reads its own writes back.
						if err := c.Set(ctx, own, fmt.Sprint(i), nil); err != nil {
							errs <- err
							return
						}
						if v, err := c.Get(ctx, own); err != nil || v != fmt.Sprint(i) {
							errs <- fmt.Errorf("read back %q, %v after writing %d", v, err, i)
							return
						}
						continue
					}
					v, err := c.Get(ctx, bigKey)
					if err == nil && v != big {
						err = fmt.Errorf("GET %s: %d bytes, not the value written: %w", bigKey, len(v), errWrongReply)
					}
					if err != nil {
						errs <- err
						return
					}
					if n := reads.Add(1); n >= 200 && c.PoolStats().Batch > 0 || n >= 3000 {
						stop.Store(true)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Positive(t, c.PoolStats().Batch, "lanes opened for the large replies")
		routed := ownID(t, c)
		list, err := admin.ClientList(ctx, nil)
		require.NoError(t, err)
		lanes := 0
		for _, line := range strings.Split(list, "\n") {
			if !strings.Contains(line, " name=lanes-large ") || strings.HasPrefix(line, fmt.Sprintf("id=%d ", routed)) {
				continue
			}
			lanes++
			assert.NotContains(t, line, " cmd=set ", "a single write on a lane")
		}
		assert.Equal(t, c.PoolStats().Batch, lanes)
	})
}

// TestIdleConnectionClosedByServer: the server closes the client's idle
// connection; nothing reads an idle connection, so the client checks one
// that has been quiet for a moment before writing on it (transport/idle.go),
// and the next write and batch succeed instead of failing with their
// outcome unknown. TestIdleCloses has the other ways to close one.
func TestIdleConnectionClosedByServer(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	admin := connect(t, respire.Options{Addr: srv.Addr})
	c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "idle-kill"})
	ctx := ctxT(t)
	key := t.Name()
	require.NoError(t, c.Set(ctx, key, "0", nil))
	for i := 1; i <= 3; i++ {
		require.Equal(t, 1, killNamed(t, admin, "idle-kill", 0))
		// Idle for a while: the condition, not a wait for an event.
		time.Sleep(20 * time.Millisecond)
		if i == 2 {
			b := c.NewBatch()
			b.Set(key, fmt.Sprint(i), nil)
			got := b.Get(key)
			require.NoError(t, b.Exec(ctx), "a batch after the close")
			v, err := got.Result()
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), v)
			continue
		}
		require.NoError(t, c.Set(ctx, key, fmt.Sprint(i), nil), "a write after the close")
		v, err := c.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(i), v)
	}
}
