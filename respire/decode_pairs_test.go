package respire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/transport/resp"
)

type streamRead struct {
	Stream string
	IDs    []string
}

func streamReadFields(t *tuple) (v streamRead) {
	v.Stream = t.str()
	v.IDs = field(t, func(m resp.Msg, i int) ([]string, int, error) { return readList(m, i, readStr) })
	return
}

// TestReadPairListKeepsOrder: XREAD's streams come as a RESP3 map or a
// RESP2 array of pairs, and keep the server's order either way.
func TestReadPairListKeepsOrder(t *testing.T) {
	want := []streamRead{{"s2", []string{"5-0"}}, {"s1", []string{"1-0", "2-0"}}}
	for _, s := range []string{
		"%2|$2|s2|*1|$3|5-0|$2|s1|*2|$3|1-0|$3|2-0|",
		"*2|*2|$2|s2|*1|$3|5-0|*2|$2|s1|*2|$3|1-0|$3|2-0|",
	} {
		m := msg(t, s)
		got, next, err := readPairList(m, 0, streamReadFields)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
		assert.Equal(t, len(m), next, s)
	}
	got, _, err := readPairList(msg(t, "*-1|"), 0, streamReadFields)
	require.NoError(t, err)
	assert.Nil(t, got)
	// Tuples longer than two (XREADGROUP CLAIM's entries) are fine.
	got, _, err = readPairList(msg(t, "*1|*4|$2|s1|*0|:5|:1|"), 0, streamReadFields)
	require.NoError(t, err)
	assert.Equal(t, []streamRead{{"s1", []string{}}}, got)
	_, _, err = readPairList(msg(t, "*1|$1|a|"), 0, streamReadFields)
	assert.Error(t, err, "not a tuple")
}

type loose struct {
	Member string
	Dist   float64
	Hash   int64
	Coord  []string
}

func looseFields(t *tuple) (v loose) {
	v.Member = t.str()
	for t.n > 0 && t.err == nil {
		switch t.kind() {
		case kindInt:
			v.Hash = t.int()
		case kindAggregate:
			v.Coord = field(t, func(m resp.Msg, i int) ([]string, int, error) { return readList(m, i, readStr) })
		default:
			v.Dist = t.float()
		}
	}
	return
}

// TestReadLooseTuple: GEOSEARCH's WITH* parts, any subset in the server's
// order, or the member alone.
func TestReadLooseTuple(t *testing.T) {
	for s, want := range map[string]loose{
		"$1|a|":                         {Member: "a"},
		"*2|$1|a|$3|1.5|":               {Member: "a", Dist: 1.5},
		"*2|$1|a|,1.5|":                 {Member: "a", Dist: 1.5},
		"*2|$1|a|:7|":                   {Member: "a", Hash: 7},
		"*3|$1|a|:7|*2|$1|x|$1|y|":      {Member: "a", Hash: 7, Coord: []string{"x", "y"}},
		"*4|$1|a|$1|2|:7|*2|$1|x|$1|y|": {Member: "a", Dist: 2, Hash: 7, Coord: []string{"x", "y"}},
	} {
		m := msg(t, s)
		got, next, err := readLooseTuple(m, 0, looseFields)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
		assert.Equal(t, len(m), next, s)
	}
}

// TestReadExpiryElems: per-field TTLs and expiry times (HTTL, HEXPIRETIME).
func TestReadExpiryElems(t *testing.T) {
	m := msg(t, "*3|:5|:-1|:-2|")
	ttls, _, err := readList(m, 0, readTTLSeconds)
	require.NoError(t, err)
	assert.Equal(t, []Null[time.Duration]{{V: 5 * time.Second, Valid: true}, {V: NoExpiry, Valid: true}, {}}, ttls)
	ms, _, err := readList(m, 0, readTTLMillis)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Millisecond, ms[0].V)
	ts, _, err := readList(msg(t, "*3|:1700000000|:-1|:-2|"), 0, readDeadlineSeconds)
	require.NoError(t, err)
	assert.True(t, ts[0].V.Equal(time.Unix(1700000000, 0)))
	assert.Equal(t, []Null[time.Time]{{Valid: true}, {}}, ts[1:])
}
