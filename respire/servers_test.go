package respire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/transport"
)

func TestArgumentAvailability(t *testing.T) {
	on := func(product, version string) *serverBitCache {
		info := &transport.ConnInfo{Server: product, Version: version}
		return &serverBitCache{info: info, bit: serverBit(*info)}
	}
	run := func(srv *serverBitCache, cond SetIfCondition) error {
		x := newCmd(&cmdSET)
		defer x.Recycle()
		x.srv = srv
		argsSetIf(x, "k", "v", cond, nil)
		return x.argErr
	}

	err := run(on("redis", "8.0.2"), SetIfCondition{IfEq: "old"})
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "SET", ue.Command)
	assert.Equal(t, "IFEQ", ue.Argument)
	assert.Equal(t, "redis 8.0.2", ue.Server)
	assert.Equal(t, []string{"redis 8.6", "valkey 8.1", "valkey 9.1"}, ue.AvailableOn)
	assert.EqualError(t, err, "respire: SET argument IFEQ is not available on redis 8.0.2 (the spec has it on redis 8.6, valkey 8.1, valkey 9.1)")
	assert.True(t, errors.Is(err, ErrUnsupported))
	assert.True(t, errors.Is(err, ErrNotSent))

	assert.NoError(t, run(on("redis", "8.0.2"), SetIfCondition{NX: true}), "an argument every server has")
	assert.NoError(t, run(on("valkey", "8.1.4"), SetIfCondition{IfEq: "old"}), "a later patch release of a spec server")
	assert.NoError(t, run(on("redis", "9.0.0"), SetIfCondition{IfEq: "old"}), "a server the spec does not know answers for itself")
	assert.NoError(t, run(nil, SetIfCondition{IfEq: "old"}), "no handshake yet")
}
