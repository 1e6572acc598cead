package resp

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var small = Limits{MaxBulk: 1024, MaxAggregate: 100, MaxLine: 64, MaxDepth: 8, MaxNodes: 500}

func TestHostile(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		lim    Limits
		reason string // substring of the Reason
		offset int64
	}{
		{"huge bulk default limits", "$9999999999999\r\n", Limits{}, "bulk string length 9999999999999 exceeds limit 536870912", 0},
		{"huge bulk small limits", "$1025\r\n", small, "bulk string length 1025 exceeds limit 1024", 0},
		{"huge bulk error", "!2000\r\n", small, "bulk error length 2000 exceeds limit 1024", 0},
		{"huge verbatim", "=2000\r\n", small, "verbatim string length 2000 exceeds limit 1024", 0},
		{"huge array", "*99999999999\r\n", Limits{}, "array of 99999999999 elements exceeds limit 16777216", 0},
		{"huge map small limits", "%101\r\n", small, "map of 101 elements exceeds limit 100", 0},
		{"huge set", "~101\r\n", small, "set of 101 elements exceeds limit 100", 0},
		{"huge push", ">101\r\n", small, "push of 101 elements", 0},
		{"huge attribute", "|101\r\n", small, "attribute of 101 elements", 0},
		{"nested too deep", strings.Repeat("*1\r\n", 9) + ":1\r\n", small, "nesting deeper than limit 8", 32},
		{"too many nodes", "*600\r\n" + strings.Repeat(":1\r\n", 600), Limits{MaxNodes: 500}, "more than 500 values", 6 + 499*4},
		{"bulk length overflow", "$99999999999999999999\r\n", Limits{}, `invalid bulk string length "99999999999999999999"`, 0},
		{"negative bulk", "$-2\r\n", Limits{}, `negative bulk string length "-2"`, 0},
		{"negative array", "*-5\r\n", Limits{}, `negative array length "-5"`, 0},
		{"null map", "%-1\r\n", Limits{}, "null length -1 is not valid for map", 0},
		{"null bulk error", "!-1\r\n", Limits{}, "null length -1 is not valid for bulk error", 0},
		{"null verbatim", "=-1\r\n", Limits{}, "null length -1 is not valid for verbatim", 0},
		{"null set", "~-1\r\n", Limits{}, "null length -1 is not valid for set", 0},
		{"null push", ">-1\r\n", Limits{}, "null length -1 is not valid for push", 0},
		{"null attribute", "|-1\r\n", Limits{}, "null length -1 is not valid for attribute", 0},
		{"empty length", "$\r\n", Limits{}, `invalid bulk string length ""`, 0},
		{"non-digit length", "*1x\r\n", Limits{}, `invalid array length "1x"`, 0},
		{"plus length", "$+1\r\n", Limits{}, `invalid bulk string length "+1"`, 0},
		{"space in length", "$ 1\r\n", Limits{}, `invalid bulk string length " 1"`, 0},
		{"bulk not followed by CRLF", "$3\r\nabcde\r\n", Limits{}, `3-byte bulk payload not followed by CRLF (got "de")`, 7},
		{"bulk followed by LF only", "$3\r\nabc\n\r\n", Limits{}, "not followed by CRLF", 7},
		{"garbage type byte", "hello\r\n", Limits{}, `invalid type byte 'h'`, 0},
		{"garbage after value", "+OK\r\n\x00", Limits{}, `invalid type byte '\x00'`, 5},
		{"CRLF only", "\r\n", Limits{}, `invalid type byte '\r'`, 0},
		{"streamed string", "$?\r\n;4\r\nabcd\r\n;0\r\n", Limits{}, "streamed bulk string (length '?') is not supported", 0},
		{"streamed array", "*?\r\n:1\r\n.\r\n", Limits{}, "streamed array (length '?') is not supported", 0},
		{"streamed map", "%?\r\n", Limits{}, "streamed map", 0},
		{"chunk type", ";4\r\nabcd\r\n", Limits{}, "streamed string chunk", 0},
		{"end type", ".\r\n", Limits{}, "end of streamed aggregate", 0},
		{"overlong line", "+" + strings.Repeat("a", 65), small, "simple string line longer than limit 64 bytes", 0},
		{"overlong line with CRLF", "+" + strings.Repeat("a", 65) + "\r\n", small, "simple string line longer than limit 64 bytes", 0},
		{"overlong line default", ":" + strings.Repeat("1", 70000), Limits{}, "integer line longer than limit 65536 bytes", 0},
		{"overlong header", "$" + strings.Repeat("1", 70), small, "bulk string line longer than limit 64 bytes", 0},
		{"lone CR", "+O\rK\r\n", Limits{}, `CR not followed by LF (got 'K') in simple string line`, 2},
		{"bare LF", "+O\nK\r\n", Limits{}, `bare LF in simple string line "O\nK"`, 2},
		{"LF only line ends", strings.Repeat(":1\n", 30), small, "integer line longer than limit", 0},
		{"integer overflow", ":9223372036854775808\r\n", Limits{}, `invalid integer "9223372036854775808"`, 0},
		{"integer underflow", ":-9223372036854775809\r\n", Limits{}, `invalid integer "-9223372036854775809"`, 0},
		{"integer empty", ":\r\n", Limits{}, `invalid integer ""`, 0},
		{"integer sign only", ":-\r\n", Limits{}, `invalid integer "-"`, 0},
		{"integer float", ":1.5\r\n", Limits{}, `invalid integer "1.5"`, 0},
		{"bad boolean", "#x\r\n", Limits{}, `invalid boolean "x" (want t or f)`, 0},
		{"boolean true word", "#true\r\n", Limits{}, `invalid boolean "true"`, 0},
		{"boolean empty", "#\r\n", Limits{}, `invalid boolean ""`, 0},
		{"double empty", ",\r\n", Limits{}, `invalid double ""`, 0},
		{"double trailing dot", ",1.\r\n", Limits{}, `invalid double "1."`, 0},
		{"double leading dot", ",.5\r\n", Limits{}, `invalid double ".5"`, 0},
		{"double hex", ",0x10\r\n", Limits{}, `invalid double "0x10"`, 0},
		{"double Infinity", ",Infinity\r\n", Limits{}, `invalid double "Infinity"`, 0},
		{"double NaN caps", ",NaN\r\n", Limits{}, `invalid double "NaN"`, 0},
		{"double exponent empty", ",1e\r\n", Limits{}, `invalid double "1e"`, 0},
		{"double space", ", 1\r\n", Limits{}, `invalid double " 1"`, 0},
		{"double underscore", ",1_0\r\n", Limits{}, `invalid double "1_0"`, 0},
		{"big number empty", "(\r\n", Limits{}, `invalid big number ""`, 0},
		{"big number letters", "(12a\r\n", Limits{}, `invalid big number "12a"`, 0},
		{"big number sign only", "(-\r\n", Limits{}, `invalid big number "-"`, 0},
		{"null with text", "_x\r\n", Limits{}, `null followed by "x" instead of CRLF`, 0},
		{"verbatim too short", "=3\r\ntxt\r\n", Limits{}, "verbatim string length 3 is shorter than its 4-byte format prefix", 0},
		{"verbatim no colon", "=8\r\ntxtxabcd\r\n", Limits{}, `verbatim string prefix "txtx" lacks ':'`, 4},
		{"nested error offset", "*2\r\n:1\r\n:x\r\n", Limits{}, `invalid integer "x"`, 8},
		{"long quoted value cut", "," + strings.Repeat("9", 40) + "x\r\n", Limits{}, `"... (41 bytes)`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, rd := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				r := NewReader(rd, c.lim)
				var err error
				for err == nil {
					_, err = r.Next()
				}
				require.ErrorIs(t, err, ErrProtocol)
				var pe *ProtocolError
				require.True(t, errors.As(err, &pe))
				assert.Contains(t, pe.Reason, c.reason)
				assert.Equal(t, c.offset, pe.Offset)
				_, again := r.Next()
				assert.Same(t, err, again, "sticky")
			}
		})
	}
}

func TestDeepNestingNoStackOverflow(t *testing.T) {
	in := strings.Repeat("*1\r\n", 100_000) + ":1\r\n"
	for _, lim := range []Limits{{}, {MaxDepth: 1000}} {
		_, err := NewReader(strings.NewReader(in), lim).Next()
		require.ErrorIs(t, err, ErrProtocol)
		assert.Contains(t, err.Error(), "nesting deeper than limit")
	}
	// Depth exactly at the limit is fine.
	in = strings.Repeat("*1\r\n", 8) + ":1\r\n"
	m, err := NewReader(strings.NewReader(in), small).Next()
	require.NoError(t, err)
	assert.Len(t, m, 9)
	// Attributes count towards depth too.
	in = strings.Repeat("|1\r\n", 9) + strings.Repeat("+k\r\n+v\r\n", 1)
	_, err = NewReader(strings.NewReader(in), small).Next()
	assert.ErrorIs(t, err, ErrProtocol)
}

// allocatedBy reports the bytes allocated while f runs.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestDeclaredLengthsDoNotAllocate(t *testing.T) {
	cases := []string{
		"$9999999999999\r\n",
		"$536870912\r\nonly a few bytes", // within the default limit, then EOF
		"*16777216\r\n:1\r\n:2\r\n",      // within the default limit, then EOF
		"%16777216\r\n+k\r\n",
		"!536870000\r\nx",
		"=536870000\r\ntxt:",
	}
	for _, in := range cases {
		var err error
		n := allocatedBy(func() {
			_, err = NewReader(strings.NewReader(in), Limits{}).Next()
		})
		require.Error(t, err, "%q", in)
		assert.Less(t, n, uint64(1<<20), "%q allocated %d bytes", in, n)
	}
}

func TestBulkGrowsWithArrivedBytesOnly(t *testing.T) {
	// A 512 MiB declared bulk of which 100 KiB arrive: the buffer follows
	// the bytes, not the declaration.
	in := "$536870912\r\n" + strings.Repeat("x", 100<<10)
	r := NewReader(strings.NewReader(in), Limits{})
	_, err := r.Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.LessOrEqual(t, len(r.buf), 256<<10)
}

func TestNeverPanicsOnTruncations(t *testing.T) {
	in, _ := stream()
	for i := range len(in) {
		r := NewReader(strings.NewReader(in[:i]), small)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
