package respire

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/respire-go/respire/internal/transport/resp"
)

// elems returns the elements of v as strings, "<nil>" for a null.
func elems(v *LeaseList) []string {
	out := []string{}
	for i := range v.Len() {
		if v.Null(i) {
			out = append(out, "<nil>")
			continue
		}
		out = append(out, string(v.Bytes(i)))
	}
	return out
}

func TestLeaseListDecoders(t *testing.T) {
	for s, want := range map[string][]string{
		// RESP2 and RESP3 arrays, sets, every scalar readLease accepts.
		"*3|$3|abc|+def|$0||":                  {"abc", "def", ""},
		"~2|=7|txt:abc|(12345678901234567890|": {"abc", "12345678901234567890"},
		"*3|:-42|,1.5|$6|a\r\nb\r\n|":          {"-42", "1.5", "a\r\nb\r\n"},
		"*0|":                                  {},
	} {
		for _, dec := range []decoder{decLeaseList, decLeaseListNull} {
			var r result
			require.NoError(t, dec(msg(t, s), &r), s)
			v := r.Any.(*LeaseList)
			assert.Equal(t, want, elems(v), s)
			v.Release()
		}
	}

	// Attributes in front of the array and of an element are skipped.
	var ra result
	require.NoError(t, decLeaseList(msgOf(t, "|1\r\n+ttl\r\n:3\r\n*2\r\n$1\r\nv\r\n|1\r\n+a\r\n:1\r\n$1\r\nw\r\n"), &ra))
	assert.Equal(t, []string{"v", "w"}, elems(ra.Any.(*LeaseList)))
	ra.Any.(*LeaseList).Release()

	// Nulls of every kind, where they are allowed.
	var r result
	require.NoError(t, decLeaseListNull(msg(t, "*5|$-1|$1|x|*-1|_|$0||"), &r))
	v := r.Any.(*LeaseList)
	assert.Equal(t, []string{"<nil>", "x", "<nil>", "<nil>", ""}, elems(v))
	assert.Nil(t, v.Bytes(0), "a null is nil")
	assert.NotNil(t, v.Bytes(4), "an empty value is not")
	assert.Empty(t, v.Bytes(4))
	v.Release()

	// A null array is no list at all: nil, which reads as empty.
	for _, s := range []string{"*-1|", "_|"} {
		var r result
		require.NoError(t, decLeaseListNull(msg(t, s), &r), s)
		assert.Nil(t, r.Any, s)
	}
}

func TestLeaseListWrongShapes(t *testing.T) {
	for s, want := range map[string]string{
		"$3|abc|":           "an array",
		":1|":               "an array",
		"%1|+a|+b|":         "an array",
		"*2|$1|a|*1|:1|":    "a string or null",
		"*2|$1|a|%1|+a|:1|": "a string or null",
		"*1|#t|":            "a string or null",
	} {
		var r result
		var u *UnexpectedReplyError
		require.ErrorAs(t, decLeaseListNull(msg(t, s), &r), &u, s)
		assert.Equal(t, want, u.Want, s)
		assert.Nil(t, r.Any, s)
	}
	// Where elements may not be null, a null is the wrong shape.
	for _, s := range []string{"*2|$1|a|$-1|", "*1|_|", "*1|*-1|"} {
		var r result
		var u *UnexpectedReplyError
		require.ErrorAs(t, decLeaseList(msg(t, s), &r), &u, s)
		assert.Equal(t, "a string", u.Want, s)
		assert.Equal(t, "null", u.Got, s)
	}
	// An error element is the server's error.
	var r result
	var e *Error
	require.ErrorAs(t, decLeaseListNull(msg(t, "*2|$1|a|-ERR bad|"), &r), &e)
	assert.Contains(t, e.Error(), "bad")
	// A reply that ends early is an error, not a short list.
	m := msg(t, "*2|$1|a|$1|b|")
	var ru result
	var u *UnexpectedReplyError
	require.ErrorAs(t, decLeaseListNull(m[:2], &ru), &u)
	assert.Equal(t, "end of reply", u.Got)
}

// The decoder copies: the list keeps its bytes when the read buffer is
// reused; an element cannot be appended into its neighbour.
func TestLeaseListCopiesBytes(t *testing.T) {
	m := msg(t, "*2|$5|hello|$5|world|")
	var r result
	require.NoError(t, decLeaseList(m, &r))
	copy(m[1].Data, "XXXXX")
	v := r.Any.(*LeaseList)
	assert.Equal(t, []string{"hello", "world"}, elems(v))
	first := v.Bytes(0)
	assert.Equal(t, len(first), cap(first))
	_ = append(first, "!!!!!"...)
	assert.Equal(t, "world", string(v.Bytes(1)))
	v.Release()
}

func TestNilLeaseList(t *testing.T) {
	var v *LeaseList
	assert.Zero(t, v.Len())
	assert.Panics(t, func() { v.Bytes(0) }, "out of range")
	assert.Panics(t, func() { v.Null(0) }, "out of range")
	assert.NotPanics(t, v.Release)
}

func TestLeaseListOutOfRange(t *testing.T) {
	var r result
	require.NoError(t, decLeaseList(msg(t, "*1|$1|a|"), &r))
	v := r.Any.(*LeaseList)
	defer v.Release()
	assert.Panics(t, func() { v.Bytes(1) })
	assert.Panics(t, func() { v.Null(-1) })
}

// Large replies: a buffer sized to all elements, and many short elements
// whose bounds outweigh their bytes.
func TestLeaseListSizes(t *testing.T) {
	for _, tc := range []struct{ n, size int }{{1, 5 << 20}, {3, 1 << 20}, {2000, 0}, {2000, 1}, {100, 100}} {
		var b strings.Builder
		b.WriteString("*" + strconv.Itoa(tc.n) + "|")
		val := strings.Repeat("v", tc.size)
		for range tc.n {
			b.WriteString("$" + strconv.Itoa(tc.size) + "|" + val + "|")
		}
		var r result
		require.NoError(t, decLeaseList(msg(t, b.String()), &r))
		v := r.Any.(*LeaseList)
		require.Equal(t, tc.n, v.Len())
		for i := range tc.n {
			require.Equal(t, val, string(v.Bytes(i)))
		}
		assert.LessOrEqual(t, tc.n*tc.size, cap(v.b))
		assert.LessOrEqual(t, tc.n*spanSize, cap(v.b), "the spans fit the size class")
		v.Release()
	}
}

func TestLeaseListMisuseIgnoredWithoutChecks(t *testing.T) {
	withLeaseChecks(t, false)
	var r result
	require.NoError(t, decLeaseList(msg(t, "*1|$1|a|"), &r))
	v := r.Any.(*LeaseList)
	v.Release()
	assert.NotPanics(t, v.Release)
	assert.Zero(t, v.Len())
	assert.Nil(t, v.Bytes(0))
	assert.False(t, v.Null(0))
}

func TestLeaseListMisuseDetected(t *testing.T) {
	withLeaseChecks(t, true)
	var r result
	require.NoError(t, decLeaseListNull(msg(t, "*2|$1|a|$-1|"), &r))
	v := r.Any.(*LeaseList)
	_, file, line, _ := runtime.Caller(0)
	v.Release()
	at := " (released at " + file + ":" + strconv.Itoa(line+1) + ")"
	assert.PanicsWithValue(t, "respire: LeaseList.Release called twice"+at, v.Release)
	assert.PanicsWithValue(t, "respire: LeaseList.Len called after Release"+at, func() { v.Len() })
	assert.PanicsWithValue(t, "respire: LeaseList.Bytes called after Release"+at, func() { v.Bytes(0) })
	assert.PanicsWithValue(t, "respire: LeaseList.Null called after Release"+at, func() { v.Null(1) })
	// Its buffer serves again, under another Lease; the stale list stays
	// caught.
	again := getLease(1)
	assert.NotSame(t, v.lease(), again)
	assert.Panics(t, func() { v.Bytes(0) })
	again.Release()
}

func TestLeaseListAllocs(t *testing.T) {
	if raceEnabled || leaseChecks {
		t.Skip("allocation counts are not meaningful under the race detector or with lease checks")
	}
	for _, s := range []string{
		"*3|$1024|" + strings.Repeat("v", 1024) + "|$-1|$3|abc|",
		"*500|" + strings.Repeat("$0||", 500), // bounds outweigh the bytes
	} {
		m := msg(t, s)
		allocs := testing.AllocsPerRun(1000, func() {
			var r result
			if err := decLeaseListNull(m, &r); err != nil {
				t.Fatal(err)
			}
			r.Any.(*LeaseList).Release()
		})
		assert.Zero(t, allocs)
	}
}

// hashPeer is a server that knows MGET, HMGET and LRANGE over fixed data,
// answering in RESP3 (HELLO 3) or RESP2.
func hashPeer(t *testing.T, data map[string]string) *testpeer.Peer {
	bulk := func(k string) string {
		v, ok := data[k]
		if !ok {
			return "$-1\r\n"
		}
		return "$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
	}
	return testpeer.Start(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "MGET":
			out := "*" + strconv.Itoa(len(args)-1) + "\r\n"
			for _, k := range args[1:] {
				out += bulk(k)
			}
			return out
		case "HMGET":
			out := "*" + strconv.Itoa(len(args)-2) + "\r\n"
			for _, f := range args[2:] {
				out += bulk(args[1] + "." + f)
			}
			return out
		case "LRANGE":
			if args[1] == "not-a-list" {
				return "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
			}
			if args[1] == "bad-shape" {
				return "%1\r\n+a\r\n+b\r\n"
			}
			return "*2\r\n" + bulk("l0") + bulk("l1")
		}
		return "+OK\r\n"
	})
}

func TestLeaseListAgainstFakeServer(t *testing.T) {
	val := "a\r\nb\x00" + strings.Repeat("z", 5000)
	srv := hashPeer(t, map[string]string{"k1": val, "k2": "", "h.f": "fv", "l0": "x", "l1": val})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Options{Addr: srv.Addr()})
	require.NoError(t, err)
	defer c.Close()

	v, err := c.MGetLease(ctx, "k1", "missing", "k2")
	require.NoError(t, err)
	assert.Equal(t, []string{val, "<nil>", ""}, elems(v))
	v.Release()

	v, err = c.HMGetLease(ctx, "h", "f", "g")
	require.NoError(t, err)
	assert.Equal(t, []string{"fv", "<nil>"}, elems(v))
	v.Release()

	v, err = c.LRangeLease(ctx, "l", 0, -1)
	require.NoError(t, err)
	assert.Equal(t, []string{"x", val}, elems(v))
	v.Release()

	// Errors: the server's, a wrong shape (naming the command), no keys.
	v, err = c.LRangeLease(ctx, "not-a-list", 0, -1)
	assert.Nil(t, v)
	var e *Error
	require.ErrorAs(t, err, &e)
	v, err = c.LRangeLease(ctx, "bad-shape", 0, -1)
	assert.Nil(t, v)
	var u *UnexpectedReplyError
	require.ErrorAs(t, err, &u)
	assert.Equal(t, "LRANGE", u.Command)
	assert.Equal(t, "an array", u.Want)
	v, err = c.MGetLease(ctx)
	assert.Nil(t, v)
	assert.Error(t, err)
	v, err = c.HMGetLease(ctx, "h")
	assert.Nil(t, v)
	assert.Error(t, err)
}

// msgOf parses a reply in wire form.
func msgOf(t testing.TB, wire string) resp.Msg {
	t.Helper()
	m, err := resp.NewReader(strings.NewReader(wire), resp.Limits{}).Next()
	require.NoError(t, err)
	return m
}
