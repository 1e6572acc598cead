package respire

import (
	"strings"

	"github.com/respire-go/respire/transport/resp"
)

// Strings of a batch's replies.
//
// A Batch of GETs makes one Go string per value. Allocated one by one, 32
// values of 1 KiB are 32 objects for the garbage collector to allocate,
// sweep and free, eight to a span; under a stream of batches that was a
// third of the client's CPU in a profile of four concurrent pipelines
// (sweeping, and the sweeper's yields to the scheduler). So the values of
// one batch that are at most maxPackedValue long are copied one after the
// other into shared chunks of up to maxPackedChunk bytes, and each string
// points into its chunk, as a substring points into its string: one
// allocation per chunk instead of one per value.
//
// The price is the substring's: a value keeps its whole chunk alive, so
// holding on to one value of a batch holds up to maxPackedChunk bytes of
// its batch's values. Single commands (Client.Get) are not packed.
//
// A batch's replies are decoded one at a time, in order, by whichever
// goroutine holds its connection's read role (the read role passes under
// the connection's mutex), so a pack needs no lock of its own. Cluster
// batches, whose per-node parts are read concurrently, are not packed.

const (
	// maxPackedValue is the longest value copied into a chunk.
	maxPackedValue = 8 << 10
	// maxPackedChunk is the largest chunk: the largest size class of the
	// Go allocator's small objects.
	maxPackedChunk = 32 << 10
)

// valuePack is the chunk the string values of one batch are copied into.
type valuePack struct {
	chunk strings.Builder
	// left counts the string commands of the batch whose values have not
	// been copied yet: a hint for the size of the next chunk.
	left int
}

// text returns b as a string, copied into the pack when it is short.
func (p *valuePack) text(b []byte) string {
	if p.left > 0 {
		p.left--
	}
	n := len(b)
	if n == 0 || n > maxPackedValue {
		return string(b)
	}
	if p.chunk.Cap()-p.chunk.Len() < n {
		// A new chunk, sized for the values still to come if they are
		// as long as this one. The strings already handed out keep the
		// old chunk.
		size := min(n*(p.left+1), maxPackedChunk)
		p.chunk = strings.Builder{}
		p.chunk.Grow(size)
	}
	start := p.chunk.Len()
	p.chunk.Write(b)
	return p.chunk.String()[start:]
}

// packedStr decodes a reply that is a string at its top into r.Str from
// the pack, and reports whether it did; other replies are left to the
// command's decoder.
func packedStr(m resp.Msg, r *result) bool {
	j := m.Value(0)
	if j >= len(m) || !isText(&m[j]) {
		return false
	}
	r.Str = r.pack.text(m[j].Data)
	return true
}
