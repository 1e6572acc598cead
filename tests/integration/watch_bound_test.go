package integration

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatchRetryBound: under contention that never ends (fn itself has a
// second client change the watched key on every attempt), WatchRetry gives
// up after Options.WatchRetries calls of fn with an error wrapping
// TxFailed, instead of looping for as long as its context allows.
func TestWatchRetryBound(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, WatchRetries: 3})
		other := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := fmt.Sprintf("watchbound%d:k", proto)
		require.NoError(t, c.Set(ctx, k, "0", nil))

		calls := 0
		err := c.WatchRetry(ctx, func(tx *respire.Tx) error {
			calls++
			v, err := c.Get(ctx, k)
			if err != nil {
				return err
			}
			// The change after WATCH that fails this attempt's EXEC.
			if err := other.Set(ctx, k, "other-"+strconv.Itoa(calls), nil); err != nil {
				return err
			}
			tx.Set(k, v+"-mine", nil)
			return nil
		}, k)
		require.ErrorIs(t, err, respire.TxFailed)
		assert.Contains(t, err.Error(), "3 attempts")
		assert.Equal(t, 3, calls)
		require.NoError(t, ctx.Err(), "the bound ended the loop, not the context")

		v, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, "other-3", v, "no attempt's transaction ran")
	})
}
