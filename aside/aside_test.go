package aside

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

func TestNewValidates(t *testing.T) {
	c, err := respire.NewClient(respire.Options{Addr: "127.0.0.1:1", ClientCache: &respire.CacheOptions{}})
	require.NoError(t, err)
	defer c.Close()
	for _, o := range []Options{{}, {TTL: time.Microsecond}, {TTL: time.Second, LoadTimeout: -1}} {
		_, err := New(c, o)
		assert.ErrorIs(t, err, ErrInvalidOption, "%+v", o)
	}
	_, err = New(nil, Options{TTL: time.Second})
	assert.ErrorIs(t, err, ErrInvalidOption)
	a, err := New(c, Options{TTL: time.Second})
	require.NoError(t, err)
	assert.Equal(t, DefaultLoadTimeout, a.o.LoadTimeout)
	_, err = a.Get(context.Background(), "k", nil)
	assert.ErrorIs(t, err, ErrInvalidOption)
	assert.NoError(t, a.Delete(context.Background()))
}

func TestCallRecoversPanic(t *testing.T) {
	a := &Cache{}
	_, err := a.call(context.Background(), "k", func(context.Context, string) (string, error) { panic("boom") })
	assert.ErrorContains(t, err, "boom")
}

// TestNewNeedsClientCache: a client without a client-side cache is refused
// at construction, with an error that names the option.
func TestNewNeedsClientCache(t *testing.T) {
	c, err := respire.NewClient(respire.Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	_, err = New(c, Options{TTL: time.Second})
	require.ErrorIs(t, err, ErrInvalidOption)
	require.ErrorIs(t, err, respire.ErrCacheDisabled)
	assert.Contains(t, err.Error(), "Options.ClientCache")
}
