package respire

// Sizes and copies of the values cached reads return. A cached value is
// shared by every hit, so a hit hands out a deep copy: a caller may modify
// what it gets (append to a slice, change a field of an entry, write
// through a *GeoPos) without touching the cache. Strings are immutable and
// are shared. A type not listed here is not cached: its reads go to the
// server each time, which is safe but slow, so a new reply type of a
// cached method belongs here (TestCachedTypesKnown checks them).

import (
	"maps"
	"slices"
	"time"
	"unsafe"

	"github.com/respire-go/respire/internal/cache"
)

// sliceSize is the heap size of a slice of n elements of elem bytes in an
// interface: the backing array and the boxed header.
func sliceSize(n int, elem uintptr) int64 {
	return cache.StringSize(n*int(elem)) + 24
}

// anySize is the heap size of the value types cached reads return; ok is
// false for any other type, which is then not cached.
func anySize(a any) (int64, bool) {
	switch v := a.(type) {
	case nil:
		return 0, true
	case string:
		return 16 + cache.StringSize(len(v)), true
	case []string:
		n := sliceSize(len(v), unsafe.Sizeof(""))
		for _, s := range v {
			n += cache.StringSize(len(s))
		}
		return n, true
	case []Null[string]:
		n := sliceSize(len(v), unsafe.Sizeof(Null[string]{}))
		for _, s := range v {
			n += cache.StringSize(len(s.V))
		}
		return n, true
	case map[string]string:
		// Buckets of string pairs at the map's 7/8 load, plus the strings.
		n := int64(48+8) * int64(len(v)) * 8 / 7
		for k, s := range v {
			n += cache.StringSize(len(k)) + cache.StringSize(len(s))
		}
		return n + 48, true
	case []int64:
		return sliceSize(len(v), 8), true
	case []bool:
		return sliceSize(len(v), 1), true
	case []Null[float64]:
		return sliceSize(len(v), unsafe.Sizeof(Null[float64]{})), true
	case []Null[time.Duration]:
		return sliceSize(len(v), unsafe.Sizeof(Null[time.Duration]{})), true
	case []Null[time.Time]:
		// The times' locations are the shared time.Local or UTC.
		return sliceSize(len(v), unsafe.Sizeof(Null[time.Time]{})), true
	case RankScore:
		return int64(unsafe.Sizeof(v)), true
	case []ScoredMember:
		n := sliceSize(len(v), unsafe.Sizeof(ScoredMember{}))
		for _, m := range v {
			n += cache.StringSize(len(m.Member))
		}
		return n, true
	case []GeoLocation:
		n := sliceSize(len(v), unsafe.Sizeof(GeoLocation{}))
		for _, l := range v {
			n += cache.StringSize(len(l.Member))
		}
		return n, true
	case []*GeoPos:
		n := sliceSize(len(v), unsafe.Sizeof((*GeoPos)(nil)))
		for _, p := range v {
			if p != nil {
				n += cache.StringSize(int(unsafe.Sizeof(*p)))
			}
		}
		return n, true
	case []StreamEntry:
		n := sliceSize(len(v), unsafe.Sizeof(StreamEntry{}))
		for _, e := range v {
			n += cache.StringSize(len(e.ID)) + cache.StringSize(len(e.Fields)*int(unsafe.Sizeof(FieldValue{})))
			for _, f := range e.Fields {
				n += cache.StringSize(len(f.Field)) + cache.StringSize(len(f.Value))
			}
		}
		return n, true
	}
	return 0, false
}

// cloneCached copies a cached Any value deeply enough that the caller may
// modify what it gets without touching the cache.
func cloneCached(a any) any {
	switch v := a.(type) {
	case []string:
		return slices.Clone(v)
	case []Null[string]:
		return slices.Clone(v)
	case map[string]string:
		return maps.Clone(v)
	case []int64:
		return slices.Clone(v)
	case []bool:
		return slices.Clone(v)
	case []Null[float64]:
		return slices.Clone(v)
	case []Null[time.Duration]:
		return slices.Clone(v)
	case []Null[time.Time]:
		return slices.Clone(v)
	case []ScoredMember:
		return slices.Clone(v)
	case []GeoLocation:
		return slices.Clone(v)
	case []*GeoPos:
		if v == nil {
			return v
		}
		out := make([]*GeoPos, len(v))
		for i, p := range v {
			if p != nil {
				c := *p
				out[i] = &c
			}
		}
		return out
	case []StreamEntry:
		if v == nil {
			return v
		}
		out := make([]StreamEntry, len(v))
		for i, e := range v {
			out[i] = StreamEntry{ID: e.ID, Fields: slices.Clone(e.Fields)}
		}
		return out
	}
	// Strings, RankScore and other values without references need no
	// copy; types anySize does not know were never cached.
	return a
}
