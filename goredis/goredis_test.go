package goredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The interfaces the libraries take.
var (
	_ redis.UniversalClient = (*Client)(nil)
	_ redis.Cmdable         = (*Client)(nil)
	_ redis.Scripter        = (*Client)(nil)
)

type marshaler struct{ b []byte }

func (m marshaler) MarshalBinary() ([]byte, error) { return m.b, nil }

type badMarshaler struct{}

func (badMarshaler) MarshalBinary() ([]byte, error) { return nil, errors.New("nope") }

func TestConvertArgs(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	got, err := convertArgs([]any{"set", []byte("k"), 7, int8(-1), uint(3), uint64(1 << 63), 1.5, float32(0.25),
		true, false, 1500 * time.Millisecond, at, nil, net.IPv4(1, 2, 3, 4).To4(), marshaler{[]byte("m")}})
	require.NoError(t, err)
	assert.Equal(t, []any{"set", []byte("k"), int64(7), int64(-1), "3", "9223372036854775808", "1.5", "0.25",
		"1", "0", "1500000000", "2026-01-02T03:04:05.000000006Z", "", []byte{1, 2, 3, 4}, []byte("m")}, got)

	_, err = convertArgs([]any{"set", "k", struct{}{}})
	require.ErrorIs(t, err, ErrNotSupported)
	assert.Contains(t, err.Error(), "argument 2 of set")
	_, err = convertArgs([]any{"set", "k", badMarshaler{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nope")
}

func TestParseScript(t *testing.T) {
	s, ok := parseScript([]any{"evalsha", "abc", int64(2), "k1", "k2", "a1", int64(3)})
	require.True(t, ok)
	assert.Equal(t, script{name: "evalsha", body: "abc", keys: []string{"k1", "k2"}, args: []any{"a1", int64(3)}}, s)
	s, ok = parseScript([]any{"EVAL_RO", "return 1", "0"})
	require.True(t, ok)
	assert.Equal(t, "eval_ro", s.name)
	assert.Empty(t, s.keys)

	for _, bad := range [][]any{
		{"get", "k", "x"},
		{"eval", "s"},
		{"eval", "s", int64(3), "k"}, // more keys than given: the server says so
		{"eval", "s", int64(-1)},
		{"eval", "s", "x"},
		{"eval", "s", int64(1), []byte("k")},
	} {
		_, ok := parseScript(bad)
		assert.False(t, ok, "%v", bad)
	}
}

func TestMapErr(t *testing.T) {
	src := &respire.Error{Command: "EVALSHA", Prefix: "NOSCRIPT", Message: "NOSCRIPT No matching script."}
	err := mapErr(src)
	assert.Equal(t, "NOSCRIPT No matching script.", err.Error(), "the server's text, as go-redis shows it")
	assert.True(t, redis.HasErrorPrefix(err, "NOSCRIPT"))
	var re redis.Error
	require.ErrorAs(t, err, &re)
	var e *respire.Error
	require.ErrorAs(t, err, &e)
	assert.Same(t, src, e)
	var ge *Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, "NOSCRIPT", ge.Prefix())

	other := context.DeadlineExceeded
	assert.Equal(t, other, mapErr(other))
}

func TestDuration(t *testing.T) {
	assert.Equal(t, 1500*time.Millisecond, duration("pttl", 1500))
	assert.Equal(t, 3*time.Second, duration("ttl", 3))
	assert.Equal(t, time.Duration(-2), duration("pttl", -2))
	assert.Equal(t, time.Duration(-1), duration("ttl", -1))
}

// offline returns a Respire client of an address where nothing listens,
// and the adapter over it, both closed at the end of the test: for what is
// decided before anything is sent.
func offline(t *testing.T) (*respire.Client, *Client) {
	t.Helper()
	rc, err := respire.NewClient(respire.Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rc.Close() })
	rdb := New(rc)
	t.Cleanup(func() { _ = rdb.Close() })
	return rc, rdb
}

// What needs no server: refusals happen before anything is sent.
func TestRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	rc, rdb := offline(t)
	assert.Same(t, rc, rdb.Respire())

	err := rdb.Set(ctx, "k", struct{}{}, 0).Err()
	require.ErrorIs(t, err, ErrNotSupported)
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "a")
		p.Set(ctx, "b", struct{}{}, 0)
		return nil
	})
	require.ErrorIs(t, err, ErrNotSupported, "one bad argument refuses the whole pipeline")

	// A Conn dials a connection of its own through Respire, and says why
	// it could not.
	conn := rdb.Conn()
	err = conn.Select(ctx, 1).Err()
	require.ErrorIs(t, err, respire.ErrUnavailable)
	require.NoError(t, conn.Close())
}

func TestNilClient(t *testing.T) {
	ctx := context.Background()
	rdb := New(nil)
	defer rdb.Close()
	require.ErrorIs(t, rdb.Get(ctx, "k").Err(), ErrNilClient)
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "k"); return nil })
	require.ErrorIs(t, err, ErrNilClient)
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "k"); return nil })
	require.ErrorIs(t, err, ErrNilClient)
}

// The adapter's connections read commands as go-redis writes them, in
// pieces, and refuse what is not a command.
func TestReadCommand(t *testing.T) {
	frame := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n")
	for i := range len(frame) {
		_, _, err := readCommand(frame[:i])
		require.ErrorIs(t, err, errIncomplete, "prefix of %d bytes", i)
	}
	words, used, err := readCommand(append(frame, '*'))
	require.NoError(t, err)
	assert.Equal(t, []string{"SET", "k", "hello"}, words)
	assert.Equal(t, len(frame), used)

	for _, bad := range []string{"+OK\r\n", "*x\r\n", "*1\r\n:1\r\n", "*1\r\n$-5\r\n"} {
		_, _, err := readCommand([]byte(bad))
		require.Error(t, err, bad)
		require.NotErrorIs(t, err, errIncomplete, bad)
	}

	// A replayed command keeps only its token.
	tok := replayPrefix + "7"
	frame = []byte(fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$3\r\nbig\r\n", len(tok), tok))
	words, _, err = readCommand(frame)
	require.NoError(t, err)
	assert.Equal(t, []string{tok}, words)
	id, ok := replayID(words[0])
	assert.True(t, ok)
	assert.Equal(t, uint64(7), id)
}

// An error reply is go-redis's own error too, for go-redis's helpers.
func TestErrorAsGoRedis(t *testing.T) {
	err := mapErr(&respire.Error{Prefix: "READONLY", Message: "READONLY You can't write against a read only replica."})
	assert.True(t, redis.IsReadOnlyError(err))
	assert.True(t, redis.HasErrorPrefix(err, "READONLY"))
	assert.False(t, redis.IsLoadingError(err))
	var e *respire.Error
	require.ErrorAs(t, err, &e)
	nested := plain([]any{&respire.Error{Prefix: "ERR", Message: "ERR x"}}).([]any)
	assert.Equal(t, reflect.TypeOf(redis.ErrNoScript), reflect.TypeOf(nested[0]))
	assert.EqualError(t, nested[0].(error), "ERR x")
}

// A cluster node's client answers READWRITE itself: its connections never
// leave read-write mode. Any other client sends it, and Respire refuses it.
func TestNodeReadWrite(t *testing.T) {
	ctx := context.Background()
	_, rdb := offline(t)
	require.Error(t, rdb.ReadWrite(ctx).Err())
	rdb.node = true
	require.NoError(t, rdb.ReadWrite(ctx).Err())
	require.Error(t, rdb.ReadOnly(ctx).Err(), "READONLY is still refused")
}
