package respire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		bad  string
	}{
		{Options{Protocol: 2, ClientCache: &CacheOptions{}}, "RESP3"},
		{Options{ClientCache: &CacheOptions{MaxBytes: -1}}, "MaxBytes"},
		{Options{ClientCache: &CacheOptions{TTL: -time.Second}}, "TTL"},
		{Options{ClientCache: &CacheOptions{Prefixes: []string{"a:"}}}, "Broadcast"},
		{Options{ClientCache: &CacheOptions{Policy: CacheLRU + 1}}, "Policy"},
	} {
		err := tc.opts.validate()
		require.ErrorIs(t, err, ErrInvalidOption)
		assert.Contains(t, err.Error(), tc.bad)
	}
	o := Options{ClientCache: &CacheOptions{Broadcast: true, Prefixes: []string{"a:"}}}
	require.NoError(t, o.validate())
}

func TestCacheDeadline(t *testing.T) {
	cc := &clientCache{}
	ms := int64(time.Millisecond)
	d, ok := cc.deadline(1000, -1, 0)
	assert.True(t, ok)
	assert.Zero(t, d, "no TTL anywhere: no deadline")
	d, _ = cc.deadline(1000, 5, 0)
	assert.Equal(t, 1000+5*ms, d, "server TTL from the time before sending")
	d, _ = cc.deadline(1000, 5, time.Millisecond)
	assert.Equal(t, 1000+ms, d, "the shorter of the two")
	d, _ = cc.deadline(1000, -1, time.Second)
	assert.Equal(t, 1000+int64(time.Second), d)
	_, ok = cc.deadline(1000, 0, 0)
	assert.False(t, ok, "expiring now")
}

func TestAnySizeAndClone(t *testing.T) {
	m := map[string]string{"a": "b"}
	_, ok := anySize(m)
	require.True(t, ok)
	c := cloneCached(m).(map[string]string)
	c["a"] = "changed"
	assert.Equal(t, "b", m["a"])
	_, ok = anySize(struct{}{})
	assert.False(t, ok, "unknown types are not cached")
}
