package goredis

import (
	"errors"

	"github.com/respire-go/respire/respire"
)

// Error is an error reply of the server, as go-redis code expects one: its
// Error method returns the server's message as the server sent it
// ("NOSCRIPT No matching script. Please use EVAL."), and it has the
// RedisError method of go-redis's redis.Error interface, so that
// redis.HasErrorPrefix and the libraries that fall back from EVALSHA to
// EVAL on NOSCRIPT recognise it. Unwrap gives the *respire.Error it came
// from, for errors.As.
type Error struct {
	err *respire.Error
}

// Error returns the server's message.
func (e *Error) Error() string { return e.err.Message }

// RedisError marks e as an error reply, for go-redis's redis.Error.
func (e *Error) RedisError() {}

// Unwrap returns the Respire error.
func (e *Error) Unwrap() error { return e.err }

// Prefix returns the first word of the message: ERR, WRONGTYPE, NOSCRIPT...
func (e *Error) Prefix() string { return e.err.Prefix }

// mapErr turns Respire's errors into what go-redis code expects: an error
// reply becomes an *Error; anything else (the context, the connection, a
// bad argument) is returned as Respire reported it, so that errors.Is and
// errors.As find Respire's sentinels and types.
func mapErr(err error) error {
	var e *respire.Error
	if errors.As(err, &e) {
		return &Error{err: e}
	}
	return err
}
