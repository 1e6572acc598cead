package respire

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/transport/resp"
)

// msg parses one reply written with '|' for CRLF.
func msg(t testing.TB, s string) resp.Msg {
	t.Helper()
	r := resp.NewReader(strings.NewReader(strings.ReplaceAll(s, "|", "\r\n")), resp.Limits{})
	m, err := r.Next()
	require.NoError(t, err)
	return m
}

type pair struct {
	Member string
	Score  float64
}

func pairFields(t *tuple) (v pair) {
	v.Member = t.str()
	v.Score = t.float()
	return
}

func readPairs(m resp.Msg, i int) ([]pair, int, error) { return readTupleList(m, i, 2, pairFields) }

func TestReadScalarsBothProtocols(t *testing.T) {
	for _, s := range []string{"$3|abc|", "+abc|", "=7|txt:abc|"} {
		v, next, err := readStr(msg(t, s), 0)
		require.NoError(t, err, s)
		assert.Equal(t, "abc", v)
		assert.Equal(t, 1, next)
	}
	for s, want := range map[string]float64{",1.5|": 1.5, "$3|1.5|": 1.5, ":2|": 2, "$3|inf|": math.Inf(1), ",-inf|": math.Inf(-1)} {
		v, _, err := readFloat(msg(t, s), 0)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	for s, want := range map[string]bool{"#t|": true, "#f|": false, ":1|": true, ":0|": false} {
		v, _, err := readBool(msg(t, s), 0)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	v, _, err := readInt(msg(t, "$2|42|"), 0)
	require.NoError(t, err)
	assert.Equal(t, int64(42), v)
}

func TestReadWrongShape(t *testing.T) {
	_, _, err := readInt(msg(t, "*1|:1|"), 0)
	var u *UnexpectedReplyError
	require.ErrorAs(t, err, &u)
	assert.Equal(t, "array", u.Got)
	_, _, err = readStr(msg(t, "_|"), 0)
	require.ErrorAs(t, err, &u)
	assert.Equal(t, "null", u.Got)
}

func TestNestedErrorIsServerError(t *testing.T) {
	_, _, err := readList(msg(t, "*2|:1|-ERR boom|"), 0, readInt)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, err.Error(), "boom")
}

func TestTupleListFlatAndNested(t *testing.T) {
	want := []pair{{"a", 1}, {"b", 2.5}}
	resp2 := msg(t, "*4|$1|a|$1|1|$1|b|$3|2.5|")
	resp3 := msg(t, "*2|*2|$1|a|,1|*2|$1|b|,2.5|")
	for _, m := range []resp.Msg{resp2, resp3} {
		got, next, err := readPairs(m, 0)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, len(m), next)
	}
	got, _, err := readPairs(msg(t, "*0|"), 0)
	require.NoError(t, err)
	assert.NotNil(t, got)
	assert.Empty(t, got)
	_, _, err = readPairs(msg(t, "*3|$1|a|$1|1|$1|b|"), 0)
	assert.Error(t, err, "odd flat array")
}

func TestTupleShortAndLong(t *testing.T) {
	// A shorter tuple leaves fields zero; a longer one skips extras.
	v, next, err := readTuple(msg(t, "*1|$1|a|"), 0, pairFields)
	require.NoError(t, err)
	assert.Equal(t, pair{Member: "a"}, v)
	assert.Equal(t, 2, next)
	m := msg(t, "*2|*3|$1|a|,1|*1|:9|*1|$1|z|")
	l, next, err := readList(m, 0, func(m resp.Msg, i int) (pair, int, error) { return readTuple(m, i, pairFields) })
	require.NoError(t, err)
	assert.Equal(t, []pair{{"a", 1}, {Member: "z"}}, l)
	assert.Equal(t, len(m), next)
}

func TestMapShapes(t *testing.T) {
	want := map[string]string{"f1": "v1", "f2": "v2"}
	for _, s := range []string{
		"%2|$2|f1|$2|v1|$2|f2|$2|v2|",       // RESP3 map
		"*4|$2|f1|$2|v1|$2|f2|$2|v2|",       // RESP2 flat
		"*2|*2|$2|f1|$2|v1|*2|$2|f2|$2|v2|", // nested pairs
	} {
		got, next, err := readMap(msg(t, s), 0, readStr, readStr)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
		assert.Equal(t, len(msg(t, s)), next)
	}
	got, _, err := readMap(msg(t, "*-1|"), 0, readStr, readStr)
	require.NoError(t, err)
	assert.Nil(t, got)
}

type rec struct {
	Length int64
	Last   string
	First  *pair
}

func recFields(r *record, v *rec) {
	switch string(r.key()) {
	case "length":
		v.Length = r.int()
	case "last-id":
		v.Last = r.str()
	case "first":
		v.First = recField(r, func(m resp.Msg, i int) (*pair, int, error) {
			return readPtr(m, i, func(m resp.Msg, i int) (pair, int, error) { return readTuple(m, i, pairFields) })
		})
	default:
		r.skip()
	}
}

func TestRecordShapes(t *testing.T) {
	resp3 := msg(t, "%4|$6|length|:3|$7|unknown|*2|:1|:2|$5|first|*2|$1|a|,1|$7|last-id|$3|1-1|")
	resp2 := msg(t, "*8|$6|length|:3|$7|unknown|*2|:1|:2|$5|first|*2|$1|a|$1|1|$7|last-id|$3|1-1|")
	for _, m := range []resp.Msg{resp3, resp2} {
		v, next, err := readRecord(m, 0, recFields)
		require.NoError(t, err)
		assert.Equal(t, rec{Length: 3, Last: "1-1", First: &pair{"a", 1}}, v)
		assert.Equal(t, len(m), next)
	}
	v, _, err := readRecord(msg(t, "%1|$5|first|_|"), 0, recFields)
	require.NoError(t, err)
	assert.Nil(t, v.First)
}

func TestAttributesAreSkipped(t *testing.T) {
	r := resp.NewReader(strings.NewReader("|1\r\n+key\r\n+val\r\n*2\r\n:1\r\n|1\r\n+a\r\n+b\r\n:2\r\n"), resp.Limits{})
	m, err := r.Next()
	require.NoError(t, err)
	got, next, err := readList(m, 0, readInt)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, got)
	assert.Equal(t, len(m), next)
}

func TestNullElements(t *testing.T) {
	got, _, err := readList(msg(t, "*3|$1|a|$-1|_|"), 0, func(m resp.Msg, i int) (Null[string], int, error) {
		return readNull(m, i, readStr)
	})
	require.NoError(t, err)
	assert.Equal(t, []Null[string]{{V: "a", Valid: true}, {}, {}}, got)
}

func TestTopLevelDecoders(t *testing.T) {
	var r result
	assert.True(t, errors.Is(decStrNull(msg(t, "$-1|"), &r), Nil))
	assert.True(t, errors.Is(decStrNull(msg(t, "_|"), &r), Nil))
	require.NoError(t, decStrNull(msg(t, "$2|hi|"), &r))
	assert.Equal(t, "hi", r.Str)
	require.NoError(t, decOK(msg(t, "+OK|"), &r))
	assert.True(t, errors.Is(decOKNull(msg(t, "_|"), &r), Nil))
	require.NoError(t, decFloatNull(msg(t, "$4|2.25|"), &r))
	assert.Equal(t, 2.25, r.Float)
	dec := decodeNullWith(readPairs)
	assert.True(t, errors.Is(dec(msg(t, "*-1|"), &r), Nil))
	require.NoError(t, dec(msg(t, "*2|$1|a|$1|1|"), &r))
	assert.Equal(t, []pair{{"a", 1}}, r.Any)
}

func TestDecodeCopiesBytes(t *testing.T) {
	m := msg(t, "*1|*2|$1|a|$1|1|")
	var r result
	require.NoError(t, decodeWith(readPairs)(m, &r))
	for i := range m {
		for j := range m[i].Data {
			m[i].Data[j] = 'X'
		}
	}
	assert.Equal(t, []pair{{"a", 1}}, r.Any)
}

func TestScalarDecodersAllocation(t *testing.T) {
	var r result
	mi, ms, mo := msg(t, ":7|"), msg(t, "$5|hello|"), msg(t, "+OK|")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = decInt(mi, &r) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = decOKNull(mo, &r) }))
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _ = decStrNull(ms, &r) }))
}
