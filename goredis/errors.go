package goredis

import (
	"errors"
	"reflect"

	"github.com/redis/go-redis/v9"

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

// As lets errors.As find go-redis's own value for the same error reply,
// as go-redis's redis.IsReadOnlyError, IsLoadingError and their kin look
// for it.
func (e *Error) As(target any) bool {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem() != protoErrorType {
		return false
	}
	v.Elem().Set(reflect.ValueOf(protoError(e.err.Message)))
	return true
}

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

// protoErrorType is the type go-redis gives error replies: a string type
// of an internal package, reached through a value go-redis exports.
var protoErrorType = reflect.TypeOf(redis.ErrNoScript)

// protoError returns msg as go-redis's own error value for an error reply
// (what it stores for an error nested in an array, for instance), or an
// *Error-free plain value if go-redis ever changes that type's kind.
func protoError(msg string) error {
	if protoErrorType.Kind() == reflect.String {
		if err, ok := reflect.ValueOf(msg).Convert(protoErrorType).Interface().(error); ok {
			return err
		}
	}
	return plainRedisError(msg)
}

// plainRedisError is an error reply with go-redis's RedisError method.
type plainRedisError string

func (e plainRedisError) Error() string { return string(e) }
func (plainRedisError) RedisError()     {}
