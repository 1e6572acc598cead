package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidates(t *testing.T) {
	c, err := respire.NewClient(respire.Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	_, err = New(nil, Options{})
	assert.ErrorIs(t, err, ErrInvalidOption)
	l, err := New(c, Options{})
	require.NoError(t, err)
	assert.Equal(t, "rate:k", l.Key("k"))
	ctx := context.Background()
	for _, lim := range []Limit{{}, {Rate: 1, Period: time.Second}, {Rate: 2, Period: time.Microsecond, Burst: 1}} {
		_, err := l.Allow(ctx, "k", lim)
		assert.ErrorIs(t, err, ErrInvalidOption, "%+v", lim)
	}
	for _, n := range []int{-1, 4} {
		_, err := l.AllowN(ctx, "k", PerSecond(1, 3), n)
		assert.ErrorIs(t, err, ErrInvalidOption, "cost %d", n)
	}
}
