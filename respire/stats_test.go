package respire

import (
	"reflect"
	"testing"

	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillDistinct sets every integer field of the struct *p to a value of its
// own (1, 2, 3, ...).
func fillDistinct(t *testing.T, p any) {
	v := reflect.ValueOf(p).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(i + 1))
		default:
			t.Fatalf("field %s: kind %s not handled", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// sameFields asserts that the public struct has the engine's fields, by
// name, with the same values.
func sameFields(t *testing.T, engine, public any) {
	ev, pv := reflect.ValueOf(engine), reflect.ValueOf(public)
	require.Equal(t, ev.NumField(), pv.NumField(), "%T and %T differ in fields", engine, public)
	for i := 0; i < ev.NumField(); i++ {
		name := ev.Type().Field(i).Name
		pf := pv.FieldByName(name)
		require.True(t, pf.IsValid(), "%T lacks %s", public, name)
		assert.Equal(t, ev.Field(i).Interface(), pf.Interface(), name)
	}
}

func TestStatsCopyEveryCounter(t *testing.T) {
	var ts transport.Stats
	fillDistinct(t, &ts)
	var st Stats
	st.add(ts)
	sameFields(t, ts, st)
	st.add(ts) // summed over nodes
	assert.Equal(t, 2*ts.Reads, st.Reads)
	assert.Equal(t, 2*ts.Replies, st.Replies)

	var cs cache.Stats
	fillDistinct(t, &cs)
	sameFields(t, cs, cacheStats(cs))
}
