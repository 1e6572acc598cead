package respire

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/respire-go/respire/internal/transport"
)

func TestUnsafeStringSharesMemory(t *testing.T) {
	b := []byte("payload")
	s := UnsafeString(b)
	assert.Equal(t, "payload", s)
	assert.Equal(t, unsafe.SliceData(b), unsafe.StringData(s), "no copy")
	assert.Equal(t, "", UnsafeString(nil))
	assert.Equal(t, "", UnsafeString(b[:0]))
	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { s = UnsafeString(b) }))
	}
}

// A value shorter than transport.DirectPayload is copied into the
// command's buffer as it is encoded: changing the bytes afterwards, even
// before the command is sent (a Batch), does not change what is sent.
func TestUnsafeStringSmallValueCopiedWhenEncoded(t *testing.T) {
	b := []byte("original")
	got, err := sent(t, &cmdSET, func(x *cmd) {
		argsSet(x, "k", UnsafeString(b), nil)
		copy(b, "XXXXXXXX")
	})
	require.NoError(t, err)
	assert.Equal(t, "SET k original", got)
}

// A large value is not copied when encoded: the command refers to the
// caller's bytes, and the transport writes them from there (Do returns
// only once no write reads them). A path that needs the whole command in
// one buffer copies them in.
func TestUnsafeStringLargeValueReferenced(t *testing.T) {
	b := bytes.Repeat([]byte("v"), transport.DirectPayload)
	x := newCmd(&cmdSET)
	defer x.Recycle()
	argsSet(x, "k", UnsafeString(b), nil)
	require.Len(t, x.refs, 1)
	assert.Equal(t, unsafe.SliceData(b), unsafe.SliceData(x.refs[0].Data), "written from the caller's memory")
	x.flatten()
	b[0] = 'X'
	assert.True(t, bytes.Contains(x.buf, bytes.Repeat([]byte("v"), transport.DirectPayload)), "flatten copied the value")
}

// Through a client: once Set returns, the peer has every byte of the
// value as it was at the call, small or large, so the caller may change it.
func TestUnsafeStringSetThenReuse(t *testing.T) {
	var mu sync.Mutex
	var stored string
	p := testpeer.Start(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "SET":
			mu.Lock()
			stored = args[2]
			mu.Unlock()
		}
		return "+OK\r\n"
	})
	c, err := NewClient(Options{Addr: p.Addr()})
	require.NoError(t, err)
	defer c.Close()
	for _, n := range []int{16, transport.DirectPayload, 1 << 20} {
		b := bytes.Repeat([]byte{'a'}, n)
		require.NoError(t, c.Set(context.Background(), "k", UnsafeString(b), nil))
		for i := range b {
			b[i] = 'X'
		}
		mu.Lock()
		assert.Equal(t, strings.Repeat("a", n), stored, "%d bytes", n)
		mu.Unlock()
	}
}
