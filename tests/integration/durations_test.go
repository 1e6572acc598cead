package integration

import (
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFractionalDurationsExact: a TTL that is not whole seconds is set as
// given, not rounded up to the next second, by the commands whose twin
// takes milliseconds (EXPIRE as PEXPIRE, SETEX as PSETEX, HEXPIRE as
// HPEXPIRE), on a real server.
func TestFractionalDurationsExact(t *testing.T) {
	srv := startFlavor(t, harness.Redis80, harness.Config{})
	ctx := ctxT(t)
	c := connect(t, respire.Options{Addr: srv.Addr})
	within := func(what string, pttl, set time.Duration) {
		t.Helper()
		assert.LessOrEqual(t, pttl, set, "%s: the TTL is at most what was set", what)
		assert.Greater(t, pttl, set-500*time.Millisecond, "%s: not rounded down either", what)
	}

	require.NoError(t, c.Set(ctx, "d:expire", "v", nil))
	ok, err := c.Expire(ctx, "d:expire", 2500*time.Millisecond, nil)
	require.NoError(t, err)
	require.True(t, ok)
	pttl, err := c.PTTL(ctx, "d:expire")
	require.NoError(t, err)
	within("Expire(2.5s)", pttl, 2500*time.Millisecond)

	require.NoError(t, c.SetEx(ctx, "d:setex", 1500*time.Millisecond, "v"))
	pttl, err = c.PTTL(ctx, "d:setex")
	require.NoError(t, err)
	within("SetEx(1.5s)", pttl, 1500*time.Millisecond)

	_, err = c.HSet(ctx, "d:hash", respire.FieldValue{Field: "f", Value: "v"})
	require.NoError(t, err)
	_, err = c.HExpire(ctx, "d:hash", 1500*time.Millisecond, []string{"f"}, nil)
	require.NoError(t, err)
	ttls, err := c.HPTTL(ctx, "d:hash", "f")
	require.NoError(t, err)
	require.Len(t, ttls, 1)
	require.True(t, ttls[0].Valid)
	within("HExpire(1.5s)", ttls[0].V, 1500*time.Millisecond)

	// Whole seconds still go as seconds.
	ok, err = c.Expire(ctx, "d:expire", 3*time.Second, nil)
	require.NoError(t, err)
	require.True(t, ok)
	ttl, err := c.TTL(ctx, "d:expire")
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, ttl)
}
