package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// Concurrent batches on one connection: batch callers pass the read role
// among themselves and with the background reader (transport/direct.go).
// Each test checks every value, so a reply handed to the wrong caller, or
// a batch that never learns its outcome, fails it.

const concBatchKeys = 200

// seedBatchKeys writes concBatchKeys keys of distinct values under prefix.
func seedBatchKeys(t *testing.T, c *respire.Client, prefix string) (keys, vals []string) {
	t.Helper()
	b := c.NewBatch()
	for i := range concBatchKeys {
		keys = append(keys, fmt.Sprintf("%s:%d", prefix, i))
		vals = append(vals, fmt.Sprintf("value-%d-%0*d", i, 64+i%700, i*7919))
		b.Set(keys[i], vals[i], nil)
	}
	require.NoError(t, b.Exec(ctxT(t)))
	return keys, vals
}

// runBatch sends one batch of 32 GETs starting at key `at` and checks the
// values; an error of Exec is returned as is.
func runBatch(ctx context.Context, c *respire.Client, keys, vals []string, at int) error {
	b := c.NewBatch()
	var fs [32]*respire.Future[string]
	for j := range fs {
		fs[j] = b.Get(keys[(at+j)%len(keys)])
	}
	if err := b.Exec(ctx); err != nil {
		return err
	}
	for j, f := range fs {
		v, err := f.Result()
		if err != nil {
			return fmt.Errorf("GET %s: %w", keys[(at+j)%len(keys)], err)
		}
		if want := vals[(at+j)%len(vals)]; v != want {
			return fmt.Errorf("GET %s: %q, want %q: %w", keys[(at+j)%len(keys)], v, want, errWrongReply)
		}
	}
	return nil
}

var errWrongReply = errors.New("wrong reply")

// TestConcurrentBatches: batch callers beside lone GETs on one client,
// some batches given deadlines that end while they are in flight; every
// value is checked and the client works on afterwards.
func TestConcurrentBatches(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	batchers, singles, rounds := 8, 4, 60
	if testing.Short() {
		rounds = 15
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode.readMode, Protocol: mode.protocol})
			ctx := ctxT(t)
			keys, vals := seedBatchKeys(t, c, t.Name())
			var wg sync.WaitGroup
			errs := make(chan error, batchers+singles)
			var cut atomic.Int64
			for g := range batchers {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 3))
					for i := range rounds {
						bctx, cancel := ctx, context.CancelFunc(func() {})
						if i%5 == 4 {
							// A deadline that may end in flight.
							bctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(300))*time.Microsecond)
						}
						err := runBatch(bctx, c, keys, vals, r.IntN(len(keys)))
						cancel()
						if err != nil && i%5 == 4 && errors.Is(err, context.DeadlineExceeded) {
							cut.Add(1)
							continue
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			for g := range singles {
				wg.Go(func() {
					for i := range rounds * 8 {
						k := (g*31 + i) % len(keys)
						v, err := c.Get(ctx, keys[k])
						if err == nil && v != vals[k] {
							err = fmt.Errorf("GET %s: %q, want %q: %w", keys[k], v, vals[k], errWrongReply)
						}
						if err != nil {
							errs <- err
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
			t.Logf("%d batches ended by their deadline", cut.Load())
			for i := range 4 {
				require.NoError(t, runBatch(ctx, c, keys, vals, i*32), "after the run")
			}
		})
	}
}

// TestConcurrentBatchesConnectionCut: the connection under concurrent
// batches is cut several times; each batch either has every value right
// or fails as a whole, and the client recovers.
func TestConcurrentBatchesConnectionCut(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	c := connect(t, respire.Options{Addr: p.Addr()})
	ctx := ctxT(t)
	keys, vals := seedBatchKeys(t, c, t.Name())

	const batchers, cuts = 6, 4
	var done atomic.Int64
	progress := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, batchers)
	var failed atomic.Int64
	for g := range batchers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := runBatch(ctx, c, keys, vals, g*17+i)
				if errors.Is(err, errWrongReply) || ctx.Err() != nil {
					errs <- err
					return
				}
				if err != nil {
					failed.Add(1)
					continue
				}
				done.Add(1)
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		})
	}
	for range cuts {
		// Cut once batches have gone through on the current connection.
		for n := done.Load(); done.Load() < n+20; {
			<-progress
		}
		p.Cut()
	}
	for n := done.Load(); done.Load() < n+20; {
		<-progress
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d batches succeeded, %d failed with the connection", done.Load(), failed.Load())
	require.NoError(t, runBatch(ctx, c, keys, vals, 0), "after the cuts")
}

// TestLargePayloadsInterleaved: values of DirectPayload and more are
// written from the command's own buffer between the small commands
// buffered around them (transport/bigwrite.go); batches and lone calls
// that mix both, from several goroutines, read back every value.
func TestLargePayloadsInterleaved(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 8 {
				big := fmt.Sprintf("%d:%d:", g, i) + strings.Repeat(string(rune('a'+g)), 64<<10+i*40000)
				small := fmt.Sprintf("small-%d-%d", g, i)
				kb, ks := fmt.Sprintf("%s:big:%d", t.Name(), g), fmt.Sprintf("%s:small:%d", t.Name(), g)
				b := c.NewBatch()
				b.Set(ks, small, nil)
				b.Set(kb, big, nil)
				gs := b.Get(ks)
				gb := b.Get(kb)
				if err := b.Exec(ctx); err != nil {
					errs <- err
					return
				}
				if gs.Val() != small || gb.Val() != big {
					errs <- fmt.Errorf("goroutine %d round %d: values differ (%d, %d bytes)", g, i, len(gs.Val()), len(gb.Val()))
					return
				}
				if err := c.Set(ctx, kb, big+"!", nil); err != nil {
					errs <- err
					return
				}
				if v, err := c.Get(ctx, kb); err != nil || v != big+"!" {
					errs <- fmt.Errorf("goroutine %d round %d: GET after SET: %d bytes, %v", g, i, len(v), err)
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
