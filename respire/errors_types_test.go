package respire

import (
	"errors"
	"io"
	"testing"

	"github.com/respire-go/respire/internal/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransportErrorsAreRespireTypes: errors.As finds the transport's
// connection and handshake errors as respire's own types, wherever they
// sit in the chain, with their fields, cause and message.
func TestTransportErrorsAreRespireTypes(t *testing.T) {
	broken := &transport.ConnError{Addr: "10.0.0.1:6379", Err: io.ErrUnexpectedEOF}
	err := error(&CommandError{Command: "SET", Err: broken})
	var ce *ConnError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "10.0.0.1:6379", ce.Addr)
	assert.Same(t, io.ErrUnexpectedEOF, ce.Err)
	assert.Equal(t, broken.Error(), ce.Error())
	assert.ErrorIs(t, ce, io.ErrUnexpectedEOF)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	var he *HandshakeError
	assert.False(t, errors.As(err, &he), "a broken connection is no handshake error")

	// A connection broken by a failed re-handshake: both are found.
	se := transport.NewServerError("WRONGPASS invalid username-password pair")
	se.Command = "AUTH"
	hs := &transport.HandshakeError{Step: "AUTH", Err: se}
	err = transport.NotSent(&transport.ConnError{Addr: "a:1", Err: hs})
	require.ErrorAs(t, err, &ce)
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "AUTH", he.Step)
	assert.True(t, he.Permanent())
	assert.Equal(t, hs.Error(), he.Error())
	assert.ErrorIs(t, err, ErrNotSent)

	// The server's refusal behind it is an *Error, even without a
	// CommandError around it (Connect's error).
	var e *Error
	require.ErrorAs(t, he, &e)
	assert.Equal(t, Error{Command: "AUTH", Prefix: "WRONGPASS", Message: se.Message}, *e)

	// A transient handshake failure is not permanent.
	loading := transport.NewServerError("LOADING Redis is loading the dataset in memory")
	loading.Command = "HELLO"
	require.ErrorAs(t, &transport.HandshakeError{Step: "HELLO", Err: loading}, &he)
	assert.False(t, he.Permanent())

	// Other targets are left alone.
	var ae *ArgError
	assert.False(t, errors.As(broken, &ae))
	var te *transport.ConnError
	require.ErrorAs(t, err, &te, "the engine's own type is still found inside")
}
