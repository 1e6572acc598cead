package respire

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverChanged (for a Sentinel master switch) drops what was cached and
// makes the tracking connection dial and track again.
func TestCacheServerChanged(t *testing.T) {
	var trackings, gets atomic.Int64
	p := testpeer.Start(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "CLIENT":
			if strings.EqualFold(args[1], "TRACKING") {
				trackings.Add(1)
			}
		case "GET":
			gets.Add(1)
			return "$1\r\nv\r\n"
		case "PTTL":
			return ":-1\r\n"
		}
		return "+OK\r\n"
	})
	ctx := context.Background()
	c, err := Connect(ctx, Options{Addr: p.Addr(), ClientCache: &CacheOptions{}})
	require.NoError(t, err)
	defer c.Close()
	for range 3 {
		v, err := c.Cached(0).Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "v", v)
	}
	require.Equal(t, int64(1), gets.Load())
	tracked := trackings.Load()

	c.cache.serverChanged(errors.New("the master moved"))
	assert.Zero(t, c.CacheStats().Entries)
	v, err := c.Cached(0).Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "v", v)
	assert.Equal(t, int64(2), gets.Load(), "read again from the server")
	assert.Greater(t, trackings.Load(), tracked, "tracking turned on again on a new connection")
}
