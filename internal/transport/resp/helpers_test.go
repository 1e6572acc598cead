package resp

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
)

// Value constructors for fixtures.

func simple(s string) Value  { return Value{Type: TypeSimpleString, Str: s} }
func errStr(s string) Value  { return Value{Type: TypeSimpleError, Str: s} }
func integer(n int64) Value  { return Value{Type: TypeInteger, Int: n} }
func bulk(s string) Value    { return Value{Type: TypeBulkString, Str: s} }
func bulkErr(s string) Value { return Value{Type: TypeBulkError, Str: s} }
func big(s string) Value     { return Value{Type: TypeBigNumber, Str: s} }
func boolean(b bool) Value {
	if b {
		return Value{Type: TypeBoolean, Int: 1}
	}
	return Value{Type: TypeBoolean}
}
func double(s string, f float64) Value    { return Value{Type: TypeDouble, Str: s, Float: f} }
func verbatim(format, s string) Value     { return Value{Type: TypeVerbatim, Format: format, Str: s} }
func null() Value                         { return Value{Type: TypeNull, Null: true} }
func nullBulk() Value                     { return Value{Type: TypeBulkString, Null: true} }
func nullArray() Value                    { return Value{Type: TypeArray, Null: true} }
func arr(elems ...Value) Value            { return Value{Type: TypeArray, Elems: nonNil(elems)} }
func mapv(elems ...Value) Value           { return Value{Type: TypeMap, Elems: nonNil(elems)} }
func set(elems ...Value) Value            { return Value{Type: TypeSet, Elems: nonNil(elems)} }
func push(elems ...Value) Value           { return Value{Type: TypePush, Elems: nonNil(elems)} }
func attrs(v Value, pairs ...Value) Value { v.Attrs = nonNil(pairs); return v }

func nonNil(v []Value) []Value {
	if v == nil {
		return []Value{}
	}
	return v
}

// valueEqual compares trees, treating NaN as equal to NaN and nil Elems as
// equal to empty Elems.
func valueEqual(a, b Value) bool {
	if a.Type != b.Type || a.Null != b.Null || a.Str != b.Str || a.Int != b.Int || a.Format != b.Format {
		return false
	}
	if a.Float != b.Float && !(math.IsNaN(a.Float) && math.IsNaN(b.Float)) {
		return false
	}
	if (a.Attrs == nil) != (b.Attrs == nil) || len(a.Attrs) != len(b.Attrs) || len(a.Elems) != len(b.Elems) {
		return false
	}
	for i := range a.Attrs {
		if !valueEqual(a.Attrs[i], b.Attrs[i]) {
			return false
		}
	}
	for i := range a.Elems {
		if !valueEqual(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	return true
}

// dump renders a Msg one node per line, for readable expectations.
func dump(m Msg) string {
	var sb strings.Builder
	for _, n := range m {
		fmt.Fprintf(&sb, "%c", byte(n.Type))
		switch {
		case n.Null:
			sb.WriteString(" null")
		case n.Type.IsAggregate(), n.Type == TypeInteger, n.Type == TypeBoolean:
			fmt.Fprintf(&sb, " %d", n.Int)
		case n.Type == TypeVerbatim:
			fmt.Fprintf(&sb, " %s:%q", n.Format[:], n.Data)
		default:
			fmt.Fprintf(&sb, " %q", n.Data)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// chunkReader returns its data in reads of random sizes between 1 and max.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func newChunkReader(data []byte, seed uint64, max int) *chunkReader {
	return &chunkReader{data: data, rng: rand.New(rand.NewPCG(seed, 7)), max: max}
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + c.rng.IntN(c.max)
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// cycleReader repeats data forever, filling each read completely.
type cycleReader struct {
	data []byte
	off  int
}

func (c *cycleReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], c.data[c.off:])
		n += k
		c.off = (c.off + k) % len(c.data)
	}
	return n, nil
}

// readAll reads every value of rd and returns their trees.
func readAll(rd io.Reader, lim Limits) ([]Value, error) {
	r := NewReader(rd, lim)
	var out []Value
	for {
		m, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m.Tree())
	}
}

func inf() float64 { return math.Inf(1) }
func nan() float64 { return math.NaN() }
