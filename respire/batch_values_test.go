package respire

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkOf returns the address of the first byte of s, so that tests can
// tell whether two strings share memory.
func chunkOf(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }

func TestValuePackCopiesEveryValue(t *testing.T) {
	p := &valuePack{left: 40}
	src := make([]byte, maxPackedValue+1)
	var got, want []string
	for i := range 40 {
		n := (i * 997) % (maxPackedValue + 2) // 0 ... maxPackedValue+1
		for j := range n {
			src[j] = byte(i + j)
		}
		want = append(want, string(src[:n]))
		got = append(got, p.text(src[:n]))
		// The source is the reader's buffer: it is overwritten at once.
		for j := range n {
			src[j] = 0xff
		}
	}
	for i := range want {
		require.Equal(t, want[i], got[i], "value %d", i)
	}
}

func TestValuePackSharesChunks(t *testing.T) {
	p := &valuePack{left: 32}
	v := bytes.Repeat([]byte("x"), 1024)
	var got []string
	for range 32 {
		got = append(got, p.text(v))
	}
	// 32 values of 1 KiB fit one chunk of 32 KiB, one after the other.
	base := chunkOf(got[0])
	for i, s := range got {
		assert.Equal(t, base+uintptr(i*1024), chunkOf(s), "value %d", i)
	}
	assert.Zero(t, p.left)
}

func TestValuePackBounds(t *testing.T) {
	p := &valuePack{left: 1000}
	v := bytes.Repeat([]byte("y"), 100)
	first := p.text(v)
	// Sized for the values to come, but never more than maxPackedChunk.
	assert.Equal(t, maxPackedChunk, p.chunk.Cap())
	// A value that does not fit what is left of the chunk starts a new
	// one; the strings handed out keep theirs.
	for p.chunk.Cap()-p.chunk.Len() >= len(v) {
		p.text(v)
	}
	next := p.text(v)
	base := chunkOf(first)
	inFirst := chunkOf(next) >= base && chunkOf(next) < base+maxPackedChunk
	assert.False(t, inFirst, "a value past the end of a full chunk")
	assert.Equal(t, strings.Repeat("y", 100), first)
	assert.Equal(t, strings.Repeat("y", 100), next)

	// Long values get strings of their own.
	big := bytes.Repeat([]byte("z"), maxPackedValue+1)
	before := p.chunk.Len()
	s := p.text(big)
	assert.Equal(t, string(big), s)
	assert.Equal(t, before, p.chunk.Len())

	// The last values of a batch get a chunk of about their size (the
	// allocator rounds it up to its size class).
	q := &valuePack{left: 2}
	q.text(v)
	assert.GreaterOrEqual(t, q.chunk.Cap(), 2*len(v))
	assert.Less(t, q.chunk.Cap(), 3*len(v))
}

// A Batch's string futures share the batch's pack; a single command and
// the other result types do not use one.
func TestBatchPacksStringFutures(t *testing.T) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	b := c.NewBatch()
	b.Get("a")
	b.Incr("n")
	b.GetLease("c")
	b.Get("b")
	require.Len(t, b.cmds, 4)
	assert.Same(t, &b.pack, b.cmds[0].res.pack)
	assert.Nil(t, b.cmds[1].res.pack)
	assert.Nil(t, b.cmds[2].res.pack)
	assert.Same(t, &b.pack, b.cmds[3].res.pack)
	assert.Equal(t, 2, b.pack.left)
	for _, x := range b.cmds {
		x.Recycle()
	}
}
