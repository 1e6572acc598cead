package respire

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/gen/spec"
	"github.com/respire-go/respire/internal/testpeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldDeadline(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		name      string
		d, ttl    int64
		seen      bool
		want      int64
		wantCache bool
	}{
		{"no ttl", 0, -1, true, 0, true},
		{"no ttl keeps d", 5 * ms, -1, true, 5 * ms, true},
		{"ttl sets d", 0, 7, true, 1000 + 7*ms, true},
		{"ttl lowers d", 1000 + 9*ms, 7, true, 1000 + 7*ms, true},
		{"ttl above d", 1000 + 3*ms, 7, true, 1000 + 3*ms, true},
		{"expiring now", 0, 0, true, 0, false},
		{"missing, not seen", 5 * ms, -2, false, 5 * ms, true},
		{"missing, seen", 5 * ms, -2, true, 0, false},
		{"unknown negative", 0, -3, true, 0, false},
	} {
		d, ok := fieldDeadline(tc.d, 1000, tc.ttl, tc.seen)
		assert.Equal(t, tc.wantCache, ok, tc.name)
		if ok {
			assert.Equal(t, tc.want, d, tc.name)
		}
	}
}

func TestCmdArgs(t *testing.T) {
	x := newCmd(&cmdHPEXPIRETIME)
	argsHPExpireTime(x, "k", []string{"a", "", "c\r\nd"})
	assert.Equal(t, []string{"HPEXPIRETIME", "k", "FIELDS", "3", "a", "", "c\r\nd"}, cmdArgs(x))
	x.seal()
	assert.Equal(t, []string{"HPEXPIRETIME", "k", "FIELDS", "3", "a", "", "c\r\nd"}, cmdArgs(x), "sealed")
	x.Recycle()
}

// TestHashReadsCoverSpec: every hash command the generator gives a Cached
// form (read-only, one key at position 1, deterministic output) is in
// hashReads, so a new one is not left to the catch-all by accident.
func TestHashReadsCoverSpec(t *testing.T) {
	s, err := spec.Load(filepath.Join("..", "spec", "commands.json"))
	require.NoError(t, err)
	n := 0
	for _, c := range s.Commands {
		if c.Group != "hash" || !slices.Contains(c.Flags, "readonly") || c.FirstKey != 1 || c.LastKey != 1 ||
			slices.Contains(c.Tips, "nondeterministic_output") {
			continue
		}
		info := commandsByName[c.Name]
		require.NotNil(t, info, c.Name)
		_, ok := hashReads[info]
		assert.True(t, ok, "%s is a cacheable hash read missing from hashReads", c.Name)
		n++
	}
	assert.Equal(t, len(hashReads), n)
	assert.Equal(t, hashWhole, hashShapeOf(&cmdInfo{name: "HNEWREAD"}), "unknown hash reads depend on every field")
	assert.Equal(t, hashNone, hashShapeOf(&cmdGET))
}

// TestCachedTypesKnown: every value type a Cached method returns can be
// sized and copied, so that no cached read goes to the server every time.
func TestCachedTypesKnown(t *testing.T) {
	ct := reflect.TypeFor[Cached]()
	for i := range ct.NumMethod() {
		m := ct.Method(i)
		if m.Type.NumOut() != 2 {
			continue
		}
		rt := m.Type.Out(0)
		switch rt.Kind() {
		case reflect.String, reflect.Int64, reflect.Float64, reflect.Bool:
			continue
		}
		if rt == reflect.TypeFor[time.Time]() {
			continue // cached as Unix nanoseconds in the Int field (expiry.go)
		}
		zero := reflect.New(rt).Elem().Interface()
		_, ok := anySize(zero)
		assert.True(t, ok, "Cached.%s returns %v, which anySize does not know", m.Name, rt)
	}
}

func TestAnySizeAndCloneDeep(t *testing.T) {
	for _, tc := range []struct {
		name   string
		val    any
		mutate func(any)
	}{
		{"[]string", []string{"a"}, func(v any) { v.([]string)[0] = "x" }},
		{"map", map[string]string{"a": "b"}, func(v any) { v.(map[string]string)["a"] = "x" }},
		{"[]int64", []int64{1, 2}, func(v any) { v.([]int64)[0] = 9 }},
		{"[]bool", []bool{true}, func(v any) { v.([]bool)[0] = false }},
		{"[]Null[float64]", []Null[float64]{{V: 1, Valid: true}}, func(v any) { v.([]Null[float64])[0].V = 9 }},
		{"[]Null[string]", []Null[string]{{V: "a", Valid: true}}, func(v any) { v.([]Null[string])[0].V = "x" }},
		{"[]ScoredMember", []ScoredMember{{Member: "m", Score: 1}}, func(v any) { v.([]ScoredMember)[0].Score = 9 }},
		{"[]GeoLocation", []GeoLocation{{Member: "m", Coord: GeoPos{Longitude: 1}}}, func(v any) { v.([]GeoLocation)[0].Coord.Longitude = 9 }},
		{"[]*GeoPos", []*GeoPos{{Longitude: 1}, nil}, func(v any) { v.([]*GeoPos)[0].Longitude = 9 }},
		{"[]StreamEntry", []StreamEntry{{ID: "1-0", Fields: []FieldValue{{Field: "f", Value: "v"}}}}, func(v any) {
			v.([]StreamEntry)[0].Fields[0].Value = "x"
		}},
		{"RankScore", RankScore{Rank: 1, Score: 2}, func(any) {}},
	} {
		size, ok := anySize(tc.val)
		require.True(t, ok, tc.name)
		assert.Positive(t, size, tc.name)
		orig := cloneCached(tc.val)
		c := cloneCached(tc.val)
		assert.Equal(t, tc.val, c, tc.name)
		tc.mutate(c)
		assert.Equal(t, orig, tc.val, "%s: changing the copy changed the cached value", tc.name)
	}
	_, ok := anySize(struct{}{})
	assert.False(t, ok, "unknown types are not cached")
	assert.Nil(t, cloneCached([]*GeoPos(nil)))
	assert.Nil(t, cloneCached([]StreamEntry(nil)))
}

// fieldTTLPeer is a scripted server without a version in HELLO (a server
// the spec does not know), for hash reads: it answers HGET h f with v and
// PTTL with -1, and HPTTL with hpttl(n), n counting the HPTTLs.
type fieldTTLPeer struct {
	*testpeer.Peer
	mu    sync.Mutex
	calls map[string]int
}

func newFieldTTLPeer(t *testing.T, hget string, hpttl func(n int) string) *fieldTTLPeer {
	p := &fieldTTLPeer{calls: map[string]int{}}
	p.Peer = testpeer.Start(t, func(args []string) string {
		name := strings.ToUpper(args[0])
		p.mu.Lock()
		p.calls[name]++
		n := p.calls[name]
		p.mu.Unlock()
		switch name {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "HGET":
			return hget
		case "PTTL":
			return ":-1\r\n"
		case "HPTTL":
			return hpttl(n)
		}
		return "+OK\r\n"
	})
	return p
}

func (p *fieldTTLPeer) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[name]
}

func TestCachedHashReadFieldTTL(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hget       string
		hpttl      func(n int) string
		misses     bool
		hgets      int // after three reads
		hpttls     int
		wantErrNil bool
	}{
		{"no field ttl", "$1\r\nv\r\n", func(int) string { return "*1\r\n:-1\r\n" }, false, 1, 1, false},
		{"far field ttl", "$1\r\nv\r\n", func(int) string { return "*1\r\n:600000\r\n" }, false, 1, 1, false},
		{"field expiring now", "$1\r\nv\r\n", func(int) string { return "*1\r\n:0\r\n" }, false, 3, 3, false},
		{"field expired after the read", "$1\r\nv\r\n", func(int) string { return "*1\r\n:-2\r\n" }, false, 3, 3, false},
		{"missing field", "_\r\n", func(int) string { return "*1\r\n:-2\r\n" }, true, 1, 1, true},
		{"hpttl fails", "$1\r\nv\r\n", func(int) string { return "-NOPERM no\r\n" }, false, 3, 3, false},
		{"hpttl unknown", "$1\r\nv\r\n", func(int) string { return "-ERR unknown command 'HPTTL'\r\n" }, false, 2, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newFieldTTLPeer(t, tc.hget, tc.hpttl)
			c, err := Connect(context.Background(), Options{Addr: p.Addr(), ClientCache: &CacheOptions{NoCacheMisses: !tc.misses}})
			require.NoError(t, err)
			defer c.Close()
			ctx := context.Background()
			for range 3 {
				v, err := c.Cached(0).HGet(ctx, "h", "f")
				if tc.wantErrNil {
					require.ErrorIs(t, err, Nil)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, "v", v)
			}
			assert.Equal(t, tc.hgets, p.count("HGET"), "HGETs sent")
			assert.Equal(t, tc.hpttls, p.count("HPTTL"), "HPTTLs sent")
		})
	}
}
