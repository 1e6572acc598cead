package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpecServerRows(t *testing.T) {
	rows, err := specServerRows([]string{"redis-7.0.15", "redis-10.2.1", "valkey-9.1.2"})
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, specServerRow{id: "redis-10.2.1", konst: "serverRedis102", product: "redis", prefix: "10.2.", name: "redis 10.2"}, rows[1])
	assert.Equal(t, "serverValkey91", rows[2].konst)

	_, err = specServerRows([]string{"redis-8.0.2", "redis-8.0.5"})
	assert.ErrorContains(t, err, "redis-8.0.2 and redis-8.0.5 share the version 8.0")
	_, err = specServerRows([]string{"redis8"})
	assert.ErrorContains(t, err, `"redis8"`)
	many := make([]string, maxServers+1)
	for i := range many {
		many[i] = "redis-" + string(rune('a'+i%26)) + ".0.0"
	}
	_, err = specServerRows(many)
	assert.ErrorContains(t, err, "holds 32")
}
