// Package typed stores Go values in Redis or Valkey through a codec.Codec and
// a Serializer (encoding/json by default): set and get a struct, compressed
// and checksummed, in one call.
//
//	var users = typed.New[User](codec.MustNew(codec.Options{Algorithm: codec.Zstd(3)}), nil)
//	err := users.Set(ctx, client, "user:42", u)
//	u, err := users.Get(ctx, client, "user:42") // errors.Is(err, respire.Nil) when missing
//
// It lives apart from package codec so that the codec itself does not depend
// on the client.
//
// Get decodes straight from the bytes of the reply string, without copying
// them first; the decoded bytes go to a pooled buffer that the Serializer
// reads. Set hands the client a string copy of the frame, since the client's
// Set takes a string. When the client gains leased replies, Get can decode
// from the lease instead and skip the reply string's own allocation.
package typed

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"unsafe"

	"github.com/respire-go/respire/codec"
	"github.com/respire-go/respire/respire"
)

// Client is the part of *respire.Client the helpers use.
type Client interface {
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string, opts *respire.SetOptions) error
}

// leaseClient is a Client with leased reads, used when available.
type leaseClient interface {
	GetLease(ctx context.Context, key string) (*respire.Lease, error)
}

// A Serializer turns Go values into bytes and back.
type Serializer interface {
	// Marshal returns the encoding of v, which the Store passes as a *T.
	Marshal(v any) ([]byte, error)
	// Unmarshal decodes data into v, which is a pointer. It must not keep
	// data after it returns: the helpers reuse that memory.
	Unmarshal(data []byte, v any) error
}

// JSON is the default Serializer, encoding/json.
type JSON struct{}

// Marshal calls json.Marshal.
func (JSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal calls json.Unmarshal, which copies what it keeps.
func (JSON) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// A Store reads and writes values of type T. It is safe for concurrent use.
type Store[T any] struct {
	codec *codec.Codec
	ser   Serializer

	// SetOptions, when not nil, are passed to every Set (an expiry, say).
	SetOptions *respire.SetOptions
}

// New returns a Store that frames values with c and serializes them with s;
// a nil s means JSON.
func New[T any](c *codec.Codec, s Serializer) *Store[T] {
	if s == nil {
		s = JSON{}
	}
	return &Store[T]{codec: c, ser: s}
}

// maxPooled bounds the buffers kept for reuse, so that one huge value does
// not pin its memory.
const maxPooled = 1 << 20

var buffers = sync.Pool{New: func() any { return new([]byte) }}

func getBuf() *[]byte { return buffers.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		buffers.Put(b)
	}
}

// Set serializes v, frames it and stores it at key with s.SetOptions. An
// error from the client comes back unchanged (respire.Nil when an NX or XX
// condition was not met).
func (s *Store[T]) Set(ctx context.Context, c Client, key string, v T) error {
	data, err := s.ser.Marshal(&v)
	if err != nil {
		return wrapErr("serializing", key, err)
	}
	buf := getBuf()
	defer putBuf(buf)
	frame, err := s.codec.AppendEncode((*buf)[:0], data)
	if err != nil {
		return wrapErr("encoding", key, err)
	}
	*buf = frame
	// The client gets its own copy: the framed bytes go back to the pool.
	return c.Set(ctx, key, string(frame), s.SetOptions)
}

// Get loads the value at key. A missing key returns the zero T and an error
// matching respire.Nil; a damaged value returns an error matching
// codec.ErrInvalidFrame.
//
// With a client that has leased reads (*respire.Client does), the frame is
// read into a pooled lease and decoded from it, so the reply costs no
// allocation; otherwise it is decoded straight from the reply string.
func (s *Store[T]) Get(ctx context.Context, c Client, key string) (T, error) {
	var v T
	var frame []byte
	if lc, ok := c.(leaseClient); ok {
		l, err := lc.GetLease(ctx, key)
		if err != nil {
			return v, err
		}
		defer l.Release()
		frame = l.Bytes()
	} else {
		raw, err := c.Get(ctx, key)
		if err != nil {
			return v, err
		}
		// AppendDecode only reads the frame, so the string's bytes serve
		// without a copy.
		frame = unsafe.Slice(unsafe.StringData(raw), len(raw))
	}
	buf := getBuf()
	defer putBuf(buf)
	out, err := s.codec.AppendDecode((*buf)[:0], frame)
	if err != nil {
		return v, wrapErr("decoding", key, err)
	}
	*buf = out
	if err := s.ser.Unmarshal(out, &v); err != nil {
		return v, wrapErr("deserializing", key, err)
	}
	return v, nil
}

// stepError is an error of one step of Set or Get on a key. It reads
// "respire: typed: decoding KEY: cause" with the cause's own leading
// "respire: " dropped, so the package is named once, and unwraps to the
// cause (codec.ErrInvalidFrame, a serializer's error, ...).
type stepError struct {
	step, key string
	err       error
}

func wrapErr(step, key string, err error) error { return &stepError{step: step, key: key, err: err} }

func (e *stepError) Error() string {
	return "respire: typed: " + e.step + " " + e.key + ": " + strings.TrimPrefix(e.err.Error(), "respire: ")
}

func (e *stepError) Unwrap() error { return e.err }
