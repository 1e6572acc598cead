package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// TestDoRoutesBlockingCommands: a blocking command sent through Do (in any
// letter case) runs on the blocking pool like its typed method, so it does
// not hold up the multiplexed connection.
func TestDoRoutesBlockingCommands(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "do:k", "v", nil))

	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "blpop", "do:list", 5)
		done <- err
	}()
	// Wait until the server has the BLPOP blocked.
	require.Eventually(t, func() bool {
		v, err := srv.Do(ctx, "INFO", "clients")
		return err == nil && strings.Contains(fmt.Sprint(v), "blocked_clients:1")
	}, 5*time.Second, time.Millisecond)

	// A GET on the same client answers at once, not after the BLPOP.
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := c.Get(short, "do:k")
	require.NoError(t, err)
	require.Equal(t, "v", v)

	_, err = c.Do(ctx, "RPUSH", "do:list", "x")
	require.NoError(t, err)
	require.NoError(t, <-done)
}
