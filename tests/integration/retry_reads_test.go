package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadsRetriedByDefault: every connection is reset, again and again,
// while goroutines read a large value (so that most resets cut a reply in
// half) alone and in batches. With the default options no read fails: each
// one whose connection broke under it is sent again on a new connection.
// With NoRetryReads some do, which shows that the resets hit them.
func TestReadsRetriedByDefault(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	value := strings.Repeat("0123456789abcdef", 16<<10) // 256 KiB
	admin := connect(t, respire.Options{Addr: srv.Addr})
	require.NoError(t, admin.Set(ctxT(t), "retry:big", value, nil))
	run := func(t *testing.T, opts respire.Options) (ok, failed int64, errs []string) {
		p, err := faultproxy.New(srv.Addr)
		require.NoError(t, err)
		defer p.Close()
		opts.Addr = p.Addr()
		c := connect(t, opts)
		var okN, failN atomic.Int64
		var mu sync.Mutex
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					var err error
					if (g+i)%2 == 0 {
						var v string
						if v, err = c.Get(ctx, "retry:big"); err == nil {
							assert.Equal(t, len(value), len(v))
						}
					} else {
						b := c.NewBatch()
						f1, f2 := b.Get("retry:big"), b.StrLen("retry:big")
						if err = b.Exec(ctx); err == nil {
							v, err1 := f1.Result()
							n, err2 := f2.Result()
							assert.NoError(t, err1)
							assert.NoError(t, err2)
							assert.Equal(t, len(value), len(v))
							assert.Equal(t, int64(len(value)), n)
						}
					}
					cancel()
					if err != nil {
						failN.Add(1)
						mu.Lock()
						if len(errs) < 5 {
							errs = append(errs, err.Error())
						}
						mu.Unlock()
						continue
					}
					okN.Add(1)
				}
			}()
		}
		for range 30 {
			time.Sleep(50 * time.Millisecond) // the fault's period, not a wait for an event
			p.CutRST()
		}
		close(stop)
		wg.Wait()
		return okN.Load(), failN.Load(), errs
	}
	t.Run("default", func(t *testing.T) {
		ok, failed, errs := run(t, respire.Options{})
		t.Logf("%d reads ok, %d failed", ok, failed)
		assert.Zero(t, failed, "reads failed: %s", strings.Join(errs, "\n"))
		assert.Positive(t, ok)
	})
	t.Run("NoRetryReads", func(t *testing.T) {
		ok, failed, errs := run(t, respire.Options{NoRetryReads: true})
		t.Logf("%d reads ok, %d failed, such as %s", ok, failed, strings.Join(errs, "; "))
		assert.Positive(t, failed, "without retries the resets fail reads")
		for _, e := range errs {
			assert.NotContains(t, e, "not sent", fmt.Sprintf("an unknown outcome, not an unsent command: %s", e))
		}
	})
}
