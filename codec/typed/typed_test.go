package typed_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/codec"
	"github.com/respire-go/respire/codec/typed"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memClient is an in-memory stand-in for *respire.Client.
type memClient struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *memClient) Get(_ context.Context, key string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	if !ok {
		return "", respire.Nil
	}
	return v, nil
}

func (c *memClient) Set(_ context.Context, key, value string, _ *respire.SetOptions) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = value
	return nil
}

var _ typed.Client = (*respire.Client)(nil)

type doc struct {
	Name  string   `json:"name"`
	Notes []string `json:"notes"`
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	mc := &memClient{m: map[string]string{}}
	s := typed.New[doc](codec.MustNew(codec.Options{Algorithm: codec.Zstd(3)}), nil)

	big := doc{Name: "big", Notes: []string{strings.Repeat("respire ", 1000)}}
	require.NoError(t, s.Set(ctx, mc, "k", big))
	assert.Less(t, len(mc.m["k"]), 1000, "a large JSON value is stored compressed")
	got, err := s.Get(ctx, mc, "k")
	require.NoError(t, err)
	assert.Equal(t, big, got)

	_, err = s.Get(ctx, mc, "missing")
	assert.ErrorIs(t, err, respire.Nil)

	mc.m["plain"] = `{"name":"plain"}`
	_, err = s.Get(ctx, mc, "plain")
	assert.ErrorIs(t, err, codec.ErrNotFramed)

	b := []byte(mc.m["k"])
	b[len(b)-1] ^= 1
	mc.m["k"] = string(b)
	_, err = s.Get(ctx, mc, "k")
	assert.ErrorIs(t, err, codec.ErrInvalidFrame)
}

type upper struct{}

func (upper) Marshal(v any) ([]byte, error) { return []byte(strings.ToUpper(*v.(*string))), nil }
func (upper) Unmarshal(data []byte, v any) error {
	if len(data) == 0 {
		return errors.New("empty")
	}
	*v.(*string) = string(data)
	return nil
}

func TestCustomSerializer(t *testing.T) {
	ctx := context.Background()
	mc := &memClient{m: map[string]string{}}
	s := typed.New[string](codec.MustNew(codec.Options{}), upper{})
	require.NoError(t, s.Set(ctx, mc, "k", "hello"))
	got, err := s.Get(ctx, mc, "k")
	require.NoError(t, err)
	assert.Equal(t, "HELLO", got)
}
