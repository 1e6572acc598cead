package respire

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeAll answers every command itself.
var fakeAll = Interceptor{Command: func(ctx context.Context, cmd Command, next CommandFunc) error {
	return cmd.Reply(CannedString("v"))
}}

// pass passes every command on.
var pass = Interceptor{Command: func(ctx context.Context, cmd Command, next CommandFunc) error {
	return next(ctx, cmd)
}}

func fakeClient(t testing.TB, ics ...Interceptor) *Client {
	c, err := NewClient(Options{Addr: "127.0.0.1:1", Interceptors: ics})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCannedReplies(t *testing.T) {
	var reply Canned
	c := fakeClient(t, Interceptor{Command: func(ctx context.Context, cmd Command, next CommandFunc) error {
		return cmd.Reply(reply)
	}})
	ctx := context.Background()
	reply = CannedArray(CannedString("a"), CannedNil(), CannedString("c"))
	vs, err := c.MGet(ctx, "a", "b", "c")
	require.NoError(t, err)
	assert.Len(t, vs, 3)
	reply = CannedMap(CannedString("f"), CannedString("v"))
	m, err := c.HGetAll(ctx, "h")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"f": "v"}, m)
	reply = CannedFloat(1.5)
	f, err := c.IncrByFloat(ctx, "x", 1)
	require.NoError(t, err)
	assert.Equal(t, 1.5, f)
	reply = CannedOK()
	require.NoError(t, c.Set(ctx, "k", "v", nil))
	reply = CannedArray(CannedInt(7))
	_, err = c.Get(ctx, "k")
	assert.Error(t, err, "a reply of the wrong type is the decoder's error")

	for _, bad := range []Canned{CannedMap(CannedInt(1)), CannedError("a\r\nb"), CannedStatus("x\n"), {}, CannedArray(Canned{})} {
		reply = bad
		_, err = c.Get(ctx, "k")
		assert.ErrorIs(t, err, ErrInterceptorMisuse)
	}
}

func TestInterceptorShortCircuitsWithoutDialing(t *testing.T) {
	errStop := errors.New("stop")
	c := fakeClient(t, Interceptor{Command: func(ctx context.Context, cmd Command, next CommandFunc) error {
		assert.Equal(t, "GET", cmd.Name())
		assert.True(t, cmd.ReadOnly())
		assert.False(t, cmd.Blocking())
		assert.Equal(t, []string{"GET", "k"}, cmd.Args().Strings())
		return errStop
	}})
	_, err := c.Get(context.Background(), "k")
	assert.ErrorIs(t, err, errStop)
}

// BenchmarkInterceptors measures the cost of the interceptor chain on a
// command answered by its innermost interceptor (no network): each
// pass-through layer adds one indirect call.
func BenchmarkInterceptors(b *testing.B) {
	for _, n := range []int{0, 1, 4} {
		ics := make([]Interceptor, 0, n+1)
		for range n {
			ics = append(ics, pass)
		}
		ics = append(ics, fakeAll)
		c := fakeClient(b, ics...)
		ctx := context.Background()
		b.Run(map[int]string{0: "fake", 1: "1pass+fake", 4: "4pass+fake"}[n], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Get(ctx, "k"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
