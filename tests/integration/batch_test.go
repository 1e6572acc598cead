package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// TestBatchMixedWithErrors: a batch of 10k mixed commands; a command's
// error (WRONGTYPE) and a missing value (Nil) belong to that command only.
func TestBatchMixedWithErrors(t *testing.T) {
	// In parallel with the other tests that wait on servers of their own:
	// nothing here depends on how fast calls come back.
	t.Parallel()
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range []int{2, 3} {
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
			ctx := ctxT(t)
			_, err := c.Do(ctx, "RPUSH", "batch:list", "x")
			require.NoError(t, err)

			const n = 10000
			b := c.NewBatch()
			sets := make([]*respire.Future[struct{}], 0, n/4)
			gets := make([]*respire.Future[string], 0, n/4)
			incrs := make([]*respire.Future[int64], 0, n/4)
			wrong := make([]*respire.Future[string], 0, n/4)
			for i := range n / 4 {
				k := fmt.Sprintf("batch:%d:%d", proto, i)
				sets = append(sets, b.Set(k, fmt.Sprint("v", i), nil))
				if i%2 == 0 {
					gets = append(gets, b.Get(k))
				} else {
					gets = append(gets, b.Get(k+":missing"))
				}
				incrs = append(incrs, b.Incr(fmt.Sprintf("batch:%d:n", proto)))
				wrong = append(wrong, b.Get("batch:list")) // WRONGTYPE
			}
			require.Equal(t, n, b.Len())
			require.NoError(t, b.Exec(ctx), "per-command errors are not batch errors")
			for i := range n / 4 {
				_, err := sets[i].Result()
				require.NoError(t, err)
				v, err := gets[i].Result()
				if i%2 == 0 {
					require.NoError(t, err)
					require.Equal(t, fmt.Sprint("v", i), v)
				} else {
					require.True(t, errors.Is(err, respire.Nil), "missing key: %v", err)
				}
				got, err := incrs[i].Result()
				require.NoError(t, err)
				require.Equal(t, int64(i+1), got)
				_, err = wrong[i].Result()
				var se *respire.Error
				require.ErrorAs(t, err, &se)
				require.Equal(t, "WRONGTYPE", se.Prefix)
			}
			_, err = c.Del(ctx, "batch:list")
			require.NoError(t, err)
		}
	})
}

// TestBatchWithBlockingCommand: a batch holding a blocking command runs on
// the blocking pool, so the multiplexed connection keeps serving others.
func TestBatchWithBlockingCommand(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "bb:k", "v", nil))
	b := c.NewBatch()
	before := b.Incr("bb:n")
	pop := b.BLPop(2*time.Second, "bb:list")
	done := make(chan error, 1)
	go func() { done <- b.Exec(ctx) }()
	require.Eventually(t, func() bool {
		v, err := srv.Do(ctx, "INFO", "clients")
		return err == nil && strings.Contains(fmt.Sprint(v), "blocked_clients:1")
	}, 5*time.Second, time.Millisecond)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := c.Get(short, "bb:k")
	require.NoError(t, err, "the multiplexed connection is not held up")
	require.Equal(t, "v", v)
	_, err = c.Do(ctx, "RPUSH", "bb:list", "x")
	require.NoError(t, err)
	require.NoError(t, <-done)
	n, err := before.Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	ke, err := pop.Result()
	require.NoError(t, err)
	require.Equal(t, "x", ke.Element)
}
