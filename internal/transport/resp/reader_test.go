package resp

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fixture struct {
	name string
	in   string
	want Value
	// nonCanonical: AppendValue(Tree) is a different, equivalent encoding.
	nonCanonical bool
}

var fixtures = []fixture{
	// RESP2
	{name: "simple string", in: "+OK\r\n", want: simple("OK")},
	{name: "empty simple string", in: "+\r\n", want: simple("")},
	{name: "simple error", in: "-ERR unknown command 'x'\r\n", want: errStr("ERR unknown command 'x'")},
	{name: "integer zero", in: ":0\r\n", want: integer(0)},
	{name: "integer negative", in: ":-42\r\n", want: integer(-42)},
	{name: "integer max", in: ":9223372036854775807\r\n", want: integer(math.MaxInt64)},
	{name: "integer min", in: ":-9223372036854775808\r\n", want: integer(math.MinInt64)},
	{name: "integer plus sign", in: ":+5\r\n", want: integer(5), nonCanonical: true},
	{name: "bulk", in: "$5\r\nhello\r\n", want: bulk("hello")},
	{name: "empty bulk", in: "$0\r\n\r\n", want: bulk("")},
	{name: "binary bulk", in: "$8\r\na\r\nb\x00\r\xff\n\r\n", want: bulk("a\r\nb\x00\r\xff\n")},
	{name: "null bulk", in: "$-1\r\n", want: nullBulk()},
	{name: "null array", in: "*-1\r\n", want: nullArray()},
	{name: "empty array", in: "*0\r\n", want: arr()},
	{name: "array", in: "*3\r\n:1\r\n$3\r\nfoo\r\n$-1\r\n", want: arr(integer(1), bulk("foo"), nullBulk())},
	{name: "nested arrays", in: "*3\r\n*2\r\n+a\r\n-b\r\n*0\r\n*-1\r\n", want: arr(arr(simple("a"), errStr("b")), arr(), nullArray())},
	// RESP3
	{name: "null", in: "_\r\n", want: null()},
	{name: "true", in: "#t\r\n", want: boolean(true)},
	{name: "false", in: "#f\r\n", want: boolean(false)},
	{name: "double", in: ",1.5\r\n", want: double("1.5", 1.5)},
	{name: "double integral", in: ",10\r\n", want: double("10", 10)},
	{name: "double exponent", in: ",-1.25E-3\r\n", want: double("-1.25E-3", -0.00125)},
	{name: "double exponent plus", in: ",1e+300\r\n", want: double("1e+300", 1e300)},
	{name: "double inf", in: ",inf\r\n", want: double("inf", math.Inf(1))},
	{name: "double plus inf", in: ",+inf\r\n", want: double("+inf", math.Inf(1))},
	{name: "double minus inf", in: ",-inf\r\n", want: double("-inf", math.Inf(-1))},
	{name: "double nan", in: ",nan\r\n", want: double("nan", math.NaN())},
	{name: "big number", in: "(3492890328409238509324850943850943825024385\r\n", want: big("3492890328409238509324850943850943825024385")},
	{name: "big number negative", in: "(-12\r\n", want: big("-12")},
	{name: "bulk error", in: "!21\r\nSYNTAX invalid syntax\r\n", want: bulkErr("SYNTAX invalid syntax")},
	{name: "bulk error with CRLF", in: "!4\r\na\r\nb\r\n", want: bulkErr("a\r\nb")},
	{name: "verbatim", in: "=15\r\ntxt:Some string\r\n", want: verbatim("txt", "Some string")},
	{name: "verbatim empty", in: "=4\r\nmkd:\r\n", want: verbatim("mkd", "")},
	{name: "verbatim with CRLF", in: "=7\r\ntxt:a\r\n\r\n", want: verbatim("txt", "a\r\n")},
	{name: "map", in: "%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", want: mapv(simple("first"), integer(1), simple("second"), integer(2))},
	{name: "empty map", in: "%0\r\n", want: mapv()},
	{name: "set", in: "~3\r\n+a\r\n:1\r\n#f\r\n", want: set(simple("a"), integer(1), boolean(false))},
	{name: "empty set", in: "~0\r\n", want: set()},
	{name: "push", in: ">3\r\n+message\r\n+chan\r\n$5\r\nhello\r\n", want: push(simple("message"), simple("chan"), bulk("hello"))},
	{name: "empty push", in: ">0\r\n", want: push()},
	{name: "nested maps", in: "%1\r\n+outer\r\n%2\r\n+inner\r\n~1\r\n:1\r\n+m\r\n%0\r\n",
		want: mapv(simple("outer"), mapv(simple("inner"), set(integer(1)), simple("m"), mapv()))},
	{name: "map with aggregate keys", in: "%1\r\n*1\r\n:1\r\n~0\r\n", want: mapv(arr(integer(1)), set())},
	{name: "attribute top level",
		in: "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n",
		want: attrs(arr(integer(2039123), integer(9543892)),
			simple("key-popularity"), mapv(bulk("a"), double("0.1923", 0.1923), bulk("b"), double("0.0012", 0.0012)))},
	{name: "attribute nested", in: "*2\r\n|1\r\n+ttl\r\n:3600\r\n+a\r\n+b\r\n",
		want: arr(attrs(simple("a"), simple("ttl"), integer(3600)), simple("b"))},
	{name: "attribute on last element", in: "*2\r\n+a\r\n|1\r\n+k\r\n+v\r\n*1\r\n:1\r\n",
		want: arr(simple("a"), attrs(arr(integer(1)), simple("k"), simple("v")))},
	{name: "empty attribute", in: "|0\r\n+OK\r\n", want: attrs(simple("OK"))},
	{name: "attribute on push", in: "|1\r\n+a\r\n+b\r\n>1\r\n+x\r\n", want: attrs(push(simple("x")), simple("a"), simple("b"))},
	{name: "attribute on map value", in: "%1\r\n+k\r\n|1\r\n+a\r\n#t\r\n:5\r\n",
		want: mapv(simple("k"), attrs(integer(5), simple("a"), boolean(true)))},
	{name: "attribute on attribute key", in: "|1\r\n|1\r\n+a\r\n+b\r\n+k\r\n+v\r\n+x\r\n",
		want: attrs(simple("x"), attrs(simple("k"), simple("a"), simple("b")), simple("v"))},
	{name: "two attributes merge", in: "|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:1\r\n",
		want: attrs(integer(1), simple("a"), simple("b"), simple("c"), simple("d")), nonCanonical: true},
	{name: "push with nested", in: ">2\r\n+invalidate\r\n*2\r\n$1\r\nk\r\n$2\r\nk2\r\n",
		want: push(simple("invalidate"), arr(bulk("k"), bulk("k2")))},
	{name: "set of maps", in: "~2\r\n%1\r\n+a\r\n:1\r\n%0\r\n", want: set(mapv(simple("a"), integer(1)), mapv())},
	{name: "all types in array",
		in: "*14\r\n+s\r\n-e\r\n:1\r\n$1\r\nb\r\n*0\r\n_\r\n#t\r\n,2.5\r\n(9\r\n!1\r\nx\r\n=5\r\ntxt:y\r\n%0\r\n~0\r\n>0\r\n",
		want: arr(simple("s"), errStr("e"), integer(1), bulk("b"), arr(), null(), boolean(true), double("2.5", 2.5),
			big("9"), bulkErr("x"), verbatim("txt", "y"), mapv(), set(), push())},
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(f.in), Limits{})
			m, err := r.Next()
			require.NoError(t, err)
			assert.Equal(t, len(m), m.Next(0), "Next(0) spans the whole message")
			got := m.Tree()
			assert.True(t, valueEqual(f.want, got), "tree\nwant %#v\ngot  %#v", f.want, got)
			enc := AppendValue(nil, got)
			if !f.nonCanonical {
				assert.Equal(t, f.in, string(enc), "round trip")
			}
			again, err := readAll(bytes.NewReader(enc), Limits{})
			require.NoError(t, err)
			require.Len(t, again, 1)
			assert.True(t, valueEqual(got, again[0]))
			_, err = r.Next()
			assert.Equal(t, io.EOF, err)
			assert.Equal(t, ReaderStats{Reads: 1, Bytes: int64(len(f.in)), Values: 1}, r.Stats())
		})
	}
}

func TestNodes(t *testing.T) {
	cases := []struct{ in, want string }{
		{"$5\r\nhello\r\n", "$ \"hello\"\n"},
		{"$-1\r\n", "$ null\n"},
		{"*-1\r\n", "* null\n"},
		{",1.5\r\n", ", \"1.5\"\n"},
		{"=15\r\ntxt:Some string\r\n", "= txt:\"Some string\"\n"},
		{"%1\r\n+k\r\n*2\r\n:1\r\n#t\r\n", "% 2\n+ \"k\"\n* 2\n: 1\n# 1\n"},
		{"|1\r\n+a\r\n+b\r\n~1\r\n_\r\n", "| 2\n+ \"a\"\n+ \"b\"\n~ 1\n_ null\n"},
		{"(-7\r\n", "( \"-7\"\n"},
	}
	for _, c := range cases {
		m, err := NewReader(strings.NewReader(c.in), Limits{}).Next()
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, dump(m), c.in)
	}
	m, err := NewReader(strings.NewReader(",-2.5e1\r\n"), Limits{}).Next()
	require.NoError(t, err)
	assert.Equal(t, -25.0, m[0].Float)
	m, err = NewReader(strings.NewReader("$0\r\n\r\n"), Limits{}).Next()
	require.NoError(t, err)
	assert.NotNil(t, m[0].Data, "empty bulk has non-nil empty Data")
	assert.Empty(t, m[0].Data)
}

// stream is every fixture, one after another.
func stream() (string, []Value) {
	var sb strings.Builder
	var want []Value
	for _, f := range fixtures {
		sb.WriteString(f.in)
		want = append(want, f.want)
	}
	return sb.String(), want
}

func assertValues(t *testing.T, want, got []Value) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for i := range want {
		if !valueEqual(want[i], got[i]) {
			t.Fatalf("value %d\nwant %#v\ngot  %#v", i, want[i], got[i])
		}
	}
}

func TestIncremental(t *testing.T) {
	in, want := stream()
	t.Run("one byte", func(t *testing.T) {
		got, err := readAll(iotest.OneByteReader(strings.NewReader(in)), Limits{})
		require.NoError(t, err)
		assertValues(t, want, got)
	})
	t.Run("half reader", func(t *testing.T) {
		got, err := readAll(iotest.HalfReader(strings.NewReader(in)), Limits{})
		require.NoError(t, err)
		assertValues(t, want, got)
	})
	t.Run("data with EOF", func(t *testing.T) {
		got, err := readAll(iotest.DataErrReader(strings.NewReader(in)), Limits{})
		require.NoError(t, err)
		assertValues(t, want, got)
	})
	for seed := range uint64(20) {
		got, err := readAll(newChunkReader([]byte(in), seed, 1+int(seed)*7), Limits{})
		require.NoError(t, err)
		assertValues(t, want, got)
	}
	for _, f := range fixtures {
		got, err := readAll(iotest.OneByteReader(strings.NewReader(f.in)), Limits{})
		require.NoError(t, err, f.name)
		assertValues(t, []Value{f.want}, got)
	}
}

// largeStream encodes a mix of big and small values.
func largeStream() ([]byte, []Value) {
	payload := strings.Repeat("0123456789\r\n", 10_000)
	many := make([]Value, 20_000)
	for i := range many {
		many[i] = bulk(strings.Repeat("x", i%50))
	}
	var want []Value
	for i := range 300 {
		switch i % 6 {
		case 0:
			want = append(want, bulk(payload[:i*97]))
		case 1:
			want = append(want, arr(many[:i*20]...))
		case 2:
			want = append(want, simple("OK"))
		case 3:
			want = append(want, mapv(simple("k"), attrs(set(integer(int64(i))), simple("a"), double("1.5", 1.5))))
		case 4:
			want = append(want, integer(int64(i)))
		default:
			want = append(want, verbatim("txt", payload[:i]))
		}
	}
	want = append(want, bulk(payload), arr(many...))
	var enc []byte
	for _, v := range want {
		enc = AppendValue(enc, v)
	}
	return enc, want
}

func TestIncrementalLarge(t *testing.T) {
	enc, want := largeStream()
	got, err := readAll(bytes.NewReader(enc), Limits{})
	require.NoError(t, err)
	assertValues(t, want, got)
	got, err = readAll(iotest.OneByteReader(bytes.NewReader(enc)), Limits{})
	require.NoError(t, err)
	assertValues(t, want, got)
	for seed := range uint64(5) {
		got, err := readAll(newChunkReader(enc, seed, 1<<uint(seed*3)), Limits{})
		require.NoError(t, err)
		assertValues(t, want, got)
	}
}

// countingReader counts how many bytes the reader was offered per call.
type countingReader struct {
	rd      io.Reader
	offered []int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.offered = append(c.offered, len(p))
	return c.rd.Read(p)
}

func TestReadsUseFreeBuffer(t *testing.T) {
	cr := &countingReader{rd: strings.NewReader("+OK\r\n")}
	r := NewReader(cr, Limits{})
	_, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, []int{initialBufSize}, cr.offered)
}

func TestEOF(t *testing.T) {
	r := NewReader(strings.NewReader(""), Limits{})
	_, err := r.Next()
	assert.Equal(t, io.EOF, err)

	for _, in := range []string{"+OK", "+OK\r", "$5\r\nhel", "$5\r\nhello\r", "*2\r\n:1\r\n", "|1\r\n+a\r\n+b\r\n", "*1\r\n"} {
		r := NewReader(strings.NewReader(in), Limits{})
		_, err := r.Next()
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%q", in)
		assert.NotErrorIs(t, err, ErrProtocol)
		assert.NotEqual(t, io.EOF, err)
		_, again := r.Next()
		assert.Equal(t, err, again, "sticky")
	}

	r = NewReader(strings.NewReader("+OK\r\n+A"), Limits{})
	m, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "OK", string(m[0].Data))
	_, err = r.Next()
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

type errAfter struct {
	data []byte
	err  error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n := copy(p, e.data)
	e.data = e.data[n:]
	if len(e.data) == 0 {
		return n, e.err
	}
	return n, nil
}

func TestReaderErrorPassesThrough(t *testing.T) {
	boom := io.ErrClosedPipe
	r := NewReader(&errAfter{data: []byte("+OK\r\n$3\r\nab"), err: boom}, Limits{})
	m, err := r.Next()
	require.NoError(t, err, "data that came with the error is parsed first")
	assert.Equal(t, "OK", string(m[0].Data))
	_, err = r.Next()
	assert.Equal(t, boom, err)
	_, err = r.Next()
	assert.Equal(t, boom, err, "sticky")
}

func TestNoProgress(t *testing.T) {
	r := NewReader(iotest.ErrReader(nil), Limits{})
	_, err := r.Next()
	assert.ErrorIs(t, err, io.ErrNoProgress)
}

func TestReset(t *testing.T) {
	r := NewReader(strings.NewReader("+A\r\n+B"), Limits{})
	_, err := r.Next()
	require.NoError(t, err)
	_, err = r.Next()
	require.Error(t, err)
	r.Reset(strings.NewReader(":1\r\n"))
	assert.Equal(t, ReaderStats{}, r.Stats())
	m, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(1), m[0].Int)
	assert.Equal(t, ReaderStats{Reads: 1, Bytes: 4, Values: 1}, r.Stats())
}

func TestDataValidUntilNext(t *testing.T) {
	// Many values per read: each Msg must alias the right bytes.
	in := strings.Repeat("$3\r\nabc\r\n*2\r\n+de\r\n(12\r\n", 2000)
	r := NewReader(iotest.HalfReader(strings.NewReader(in)), Limits{})
	for range 2000 {
		m, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, "abc", string(m[0].Data))
		m, err = r.Next()
		require.NoError(t, err)
		require.Equal(t, "de", string(m[1].Data))
		require.Equal(t, "12", string(m[2].Data))
	}
}

func TestBufferShrinksAfterHugeReply(t *testing.T) {
	huge := AppendValue(nil, bulk(strings.Repeat("z", 4<<20)))
	in := append(huge, "+a\r\n+b\r\n+c\r\n"...)
	r := NewReader(bytes.NewReader(in), Limits{})
	m, err := r.Next()
	require.NoError(t, err)
	require.Len(t, m[0].Data, 4<<20)
	assert.Less(t, len(r.buf), 5<<20, "growth is capped by what the reply needs")
	for _, want := range []string{"a", "b", "c"} {
		m, err = r.Next()
		require.NoError(t, err)
		assert.Equal(t, want, string(m[0].Data))
	}
	assert.Equal(t, initialBufSize, len(r.buf), "buffer released once small replies follow")
}

func TestNodesShrinkAfterHugeReply(t *testing.T) {
	in := AppendValue(nil, arr(make([]Value, 100_000)...))
	in = append(in, "+a\r\n+b\r\n+c\r\n"...)
	r := NewReader(bytes.NewReader(in), Limits{})
	m, err := r.Next()
	require.NoError(t, err)
	require.Len(t, m, 100_001)
	for range 3 {
		_, err = r.Next()
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, cap(r.nodes), maxRetainNodes)
}

func TestZeroAllocSteadyState(t *testing.T) {
	r := NewReader(&cycleReader{data: []byte("+OK\r\n:1\r\n$5\r\nhello\r\n*2\r\n$1\r\na\r\n,1.5\r\n%1\r\n+k\r\n#t\r\n")}, Limits{})
	for range 100 {
		_, err := r.Next()
		require.NoError(t, err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

// msgReader returns its chunks one after the other, never two in one
// read.
type msgReader struct{ chunks [][]byte }

func (c *msgReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// TestShrinkForIdle: Shrink gives back what large replies grew (a read
// buffer below the size Next releases by itself, the nodes, a spare side
// buffer) once nothing is unread, even below the initial size, and
// reading goes on, growing again as needed; with bytes unread it does
// nothing.
func TestShrinkForIdle(t *testing.T) {
	elems := make([]Value, 8_000)
	for i := range elems {
		elems[i] = bulk(strings.Repeat("e", 30))
	}
	large := AppendValue(nil, arr(elems...))
	side := AppendValue(nil, bulk(strings.Repeat("s", 2*SideBulk)))
	tail := []byte("+" + strings.Repeat("t", 100) + "\r\n+a\r\n+b\r\n")
	r := NewReader(&msgReader{chunks: [][]byte{large, side, tail}}, Limits{})
	m, err := r.Next()
	require.NoError(t, err)
	require.Len(t, m, 8_001)
	require.Greater(t, len(r.buf), initialBufSize)
	require.LessOrEqual(t, len(r.buf), maxRetainBuf, "a buffer Next would keep")
	m, err = r.Next()
	require.NoError(t, err)
	require.Len(t, m[0].Data, 2*SideBulk)
	require.Zero(t, r.Buffered())

	r.Shrink(initialBufSize)
	assert.Equal(t, initialBufSize, len(r.buf))
	assert.Nil(t, r.nodes)
	assert.Nil(t, r.spare)
	assert.Empty(t, r.sides)
	r.Shrink(16)
	assert.Equal(t, 16, len(r.buf))

	m, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("t", 100), string(m[0].Data), "the buffer grew for a longer value")
	m, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", string(m[0].Data))
	require.Equal(t, 4, r.Buffered())
	buf := r.buf
	r.Shrink(0)
	assert.Equal(t, 4, r.Buffered(), "unread bytes: nothing changes")
	assert.Equal(t, &buf[0], &r.buf[0])
	m, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, "b", string(m[0].Data))
	_, err = r.Next()
	require.ErrorIs(t, err, io.EOF)
}
