package respire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests need no server: argument errors stop a batch before anything
// is sent, and NewClient does not dial.
func TestBatchArgumentErrorSendsNothing(t *testing.T) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1", FailFast: true})
	require.NoError(t, err)
	defer c.Close()
	b := c.NewBatch()
	get := b.Get("k")
	_, err = get.Result()
	assert.ErrorIs(t, err, ErrNotExecuted)
	bad := b.Set("k", "v", &SetOptions{EX: 1500 * time.Millisecond, KeepTTL: true})
	assert.Equal(t, 2, b.Len())

	err = b.Exec(context.Background())
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "SET", ae.Command)
	assert.ErrorAs(t, bad.Err(), &ae)
	assert.ErrorAs(t, get.Err(), &ae, "every future of a batch that was not sent has its error")
	assert.ErrorIs(t, b.Exec(context.Background()), ErrBatchDone)
	late := b.Incr("n")
	assert.ErrorIs(t, late.Err(), ErrBatchDone)
}

func TestEmptyBatch(t *testing.T) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	assert.NoError(t, c.NewBatch().Exec(context.Background()))
}

func TestArgumentValidation(t *testing.T) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1", FailFast: true})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	var ae *ArgError
	for name, err := range map[string]error{
		"two branches":   func() error { _, err := c.SetIf(ctx, "k", "v", SetIfCondition{NX: true, XX: true}, nil); return err }(),
		"EX and KEEPTTL": c.Set(ctx, "k", "v", &SetOptions{EX: 10 * time.Second, KeepTTL: true}),
		"negative wait":  func() error { _, err := c.BLPop(ctx, -time.Second, "k"); return err }(),
		"no keys":        func() error { _, err := c.Del(ctx); return err }(),
		"no choice":      func() error { _, err := c.GeoSearch(ctx, "k", GeoSearchFrom{}, GeoSearchBy{}, nil); return err }(),
		"missing enum":   func() error { _, err := c.LMove(ctx, "a", "b", "", SideLeft); return err }(),
		"NaN":            func() error { _, err := c.IncrByFloat(ctx, "k", nan()); return err }(),
		"before 1970":    func() error { _, err := c.ExpireAt(ctx, "k", time.Unix(-5, 0), nil); return err }(),
	} {
		if assert.True(t, errors.As(err, &ae), "%s: %v", name, err) {
			assert.NotEmpty(t, ae.Command, name)
			assert.NotEmpty(t, ae.Argument, name)
		}
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

// The futures of a batch's first 8 string commands (GET, the most batched)
// come with the batch's own allocation, and later ones from slabs of 24,
// 32, 64 ...: queueing 8 GETs allocates the batch alone, 32 GETs one slab
// more, 64 two. (Commands and the batch's lists come from pools.)
func TestBatchFuturesAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled values at random")
	}
	c, err := NewClient(Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	queue := func(n int, add func(*Batch)) func() {
		return func() {
			b := c.NewBatch()
			for range n {
				add(b)
			}
			// Give the commands and lists back as Exec would.
			for _, x := range b.cmds {
				x.Recycle()
			}
			b.recycleLists(b.cmds, b.futs)
		}
	}
	get := func(b *Batch) { b.Get("k") }
	incr := func(b *Batch) { b.Incr("n") }
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, queue(1, get)), "one GET")
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, queue(8, get)), "8 GETs")
	assert.Equal(t, 2.0, testing.AllocsPerRun(100, queue(32, get)), "32 GETs: a slab of 24")
	assert.Equal(t, 3.0, testing.AllocsPerRun(100, queue(64, get)), "64 GETs: slabs of 24 and 32")
	assert.Equal(t, 2.0, testing.AllocsPerRun(100, queue(8, incr)), "8 INCRs: a slab of their own")
}

// A key picks its connection by a hash only when the client has more than
// one: with one, commands skip hashing their keys.
func TestKeyRouteOnlyWithConnectionsToPick(t *testing.T) {
	one, err := NewClient(Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer one.Close()
	two, err := NewClient(Options{Addr: "127.0.0.1:1", Connections: 2})
	require.NoError(t, err)
	defer two.Close()
	for _, key := range []string{"k", "user:1", "user:2"} {
		b := two.NewBatch()
		b.Get(key)
		assert.Equal(t, routeOf(key), b.cmds[0].Route, "two connections: %s", key)
		b = one.NewBatch()
		b.Get(key)
		assert.Zero(t, b.cmds[0].Route, "one connection: %s", key)
	}
}
