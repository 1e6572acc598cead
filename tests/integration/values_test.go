package integration

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFractionalDurations: durations are sent as users compute them, never
// refused for a fraction and never rounded to 0.
func TestFractionalDurations(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)

	t.Run("SET EX with a fraction is PX", func(t *testing.T) {
		require.NoError(t, c.Set(ctx, "frac:ex", "v", &respire.SetOptions{EX: 1500 * time.Millisecond}))
		ttl, err := c.PTTL(ctx, "frac:ex")
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Second, "not rounded down to EX 1")
		assert.LessOrEqual(t, ttl, 1500*time.Millisecond, "not rounded up to EX 2")
	})

	t.Run("a TTL of 1µs is PX 1, not 0", func(t *testing.T) {
		for name, o := range map[string]*respire.SetOptions{
			"EX": {EX: time.Microsecond},
			"PX": {PX: time.Microsecond},
		} {
			k := "frac:tiny:" + name
			// PX 0 or EX 0 would be refused by the server.
			require.NoError(t, c.Set(ctx, k, "v", o), name)
			ttl, err := c.PTTL(ctx, k)
			if errors.Is(err, respire.Nil) {
				continue // already expired: it had a TTL of 1ms
			}
			require.NoError(t, err, name)
			assert.LessOrEqual(t, ttl, time.Millisecond, "%s: a 1ms TTL, not a second", name)
			assert.NotEqual(t, respire.NoExpiry, ttl, name)
		}
	})

	t.Run("GETEX EX with a fraction", func(t *testing.T) {
		require.NoError(t, c.Set(ctx, "frac:getex", "v", nil))
		_, err := c.GetEx(ctx, "frac:getex", &respire.GetExOptions{EX: 2500 * time.Millisecond})
		require.NoError(t, err)
		ttl, err := c.PTTL(ctx, "frac:getex")
		require.NoError(t, err)
		assert.Greater(t, ttl, 2*time.Second)
		assert.LessOrEqual(t, ttl, 2500*time.Millisecond)
	})

	t.Run("EXPIRE with a fraction is sent in milliseconds", func(t *testing.T) {
		// 10s and 1ns: PEXPIRE 10001 (a fraction of a millisecond rounds
		// up, never down to 0); EXPIRE would have said 11s. A TTL of 1ns
		// alone would be 1ms: gone before it could be read back.
		require.NoError(t, c.Set(ctx, "frac:expire", "v", nil))
		ok, err := c.Expire(ctx, "frac:expire", 10*time.Second+time.Nanosecond, nil)
		require.NoError(t, err)
		assert.True(t, ok)
		ttl, err := c.PTTL(ctx, "frac:expire")
		require.NoError(t, err)
		assert.Greater(t, ttl, 9*time.Second)
		assert.LessOrEqual(t, ttl, 10*time.Second+time.Millisecond)
	})

	t.Run("blocking timeouts", func(t *testing.T) {
		start := time.Now()
		_, err := c.BRPop(ctx, 50*time.Millisecond, "frac:nolist")
		require.ErrorIs(t, err, respire.Nil, "a fractional timeout times out")
		assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

		// Below the server's millisecond: 1ms, not "block without a
		// limit" (ctxT's deadline would end the test).
		_, err = c.BLPop(ctx, time.Microsecond, "frac:nolist")
		require.ErrorIs(t, err, respire.Nil)
		_, err = c.XRead(ctx, []string{"frac:nostream"}, []string{"$"}, &respire.XReadOptions{Block: ptr(time.Microsecond)})
		require.ErrorIs(t, err, respire.Nil)

		_, err = c.RPush(ctx, "frac:list", "x")
		require.NoError(t, err)
		ke, err := c.BLPop(ctx, 1500*time.Millisecond, "frac:list")
		require.NoError(t, err)
		assert.Equal(t, respire.KeyElement{Key: "frac:list", Element: "x"}, ke)

		b := c.NewBatch()
		w := b.Wait(1, time.Microsecond)
		require.NoError(t, b.Exec(ctx))
		n, err := w.Result()
		require.NoError(t, err, "WAIT 1 1: no replica, 1ms")
		assert.Equal(t, int64(0), n)
	})
}

// TestUnsafeStringValue: a []byte value sent through respire.UnsafeString
// round-trips, costs no allocation beyond SET's own (none), where
// string(b) costs one, and the bytes are the caller's again after the call.
func TestUnsafeStringValue(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	for _, size := range []int{1 << 10, 256 << 10} {
		val := binaryValue(size, uint64(size))
		orig := bytes.Clone(val)
		require.NoError(t, c.Set(ctx, "bytes:k", respire.UnsafeString(val), nil))
		for i := range val {
			val[i] = 'X'
		}
		got, err := c.Get(ctx, "bytes:k")
		require.NoError(t, err)
		assert.True(t, bytes.Equal(orig, []byte(got)), "%d bytes as they were at the call", size)

		if raceEnabled {
			continue // allocation counts are not meaningful under the race detector
		}
		var err2 error
		check := allocChecker(t, &err2)
		held := string(orig)
		check("SET of a string", 0, func() { err2 = c.Set(ctx, "bytes:k", held, nil) })
		check("SET UnsafeString", 0, func() { err2 = c.Set(ctx, "bytes:k", respire.UnsafeString(orig), nil) })
		withCopy := testing.AllocsPerRun(100, func() { err2 = c.Set(ctx, "bytes:k", string(orig), nil) })
		assert.GreaterOrEqual(t, withCopy, 1.0, "string(b) copies: the baseline this avoids")
	}
}
