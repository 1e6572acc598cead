package respire

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/transport/resp"
)

// TestAnyTextMatchesArgAny: the map forms send a value as the same text Do
// sends it as.
func TestAnyTextMatchesArgAny(t *testing.T) {
	vals := []any{"s", []byte("b"), int(-1), int8(-8), int16(-16), int32(2), int64(-3), uint(4), uint8(255), uint16(65535),
		uint32(5), uint64(math.MaxUint64), 1.5, float32(0.25), math.Inf(1), math.Inf(-1), 1e21, true, false,
		1500 * time.Millisecond}
	for _, v := range vals {
		x := blankCmd(&cmdDo)
		x.argAny("DO", "0", v)
		require.NoError(t, x.argErr, "%T", v)
		s, ok := anyText(v)
		require.True(t, ok, "%T", v)
		assert.Equal(t, string(resp.AppendBulkString(nil, s)), string(x.buf[hdrRoom:]), "%T %v", v, v)
		x.Recycle()
	}
	_, ok := anyText(struct{}{})
	assert.False(t, ok)
	_, ok = anyText(nil)
	assert.False(t, ok)
	_, ok = anyText(time.Now())
	assert.False(t, ok, "a time.Time is refused, though it is a BinaryMarshaler")
	_, ok = anyText(binaryValue("x"))
	assert.False(t, ok, "an encoding.BinaryMarshaler is refused")
}

// binaryValue is an encoding.BinaryMarshaler.
type binaryValue string

func (b binaryValue) MarshalBinary() ([]byte, error) { return []byte(b), nil }

// TestArgAnyRefusalsSayWhatToSend: nil, a time.Time, a BinaryMarshaler
// and other types are *ArgErrors naming the command and what to send.
func TestArgAnyRefusalsSayWhatToSend(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, `send "" for an empty string`},
		{time.Unix(1, 0), "t.Unix() or t.UnixMilli()"},
		{struct{}{}, "unsupported type struct {} (strings, []byte, integers"},
		{&struct{}{}, "unsupported type *struct {}"},
		{binaryValue("x"), "send the []byte its MarshalBinary returns"},
	} {
		x := blankCmd(&cmdDo)
		x.argAny("SET", "2", c.v)
		var ae *ArgError
		require.ErrorAs(t, x.argErr, &ae, "%T", c.v)
		assert.Contains(t, ae.Error(), c.want)
		assert.Contains(t, ae.Error(), "SET")
		x.Recycle()
	}
}

func TestSetIfGetOutcome(t *testing.T) {
	old := func(v string, valid bool) *result { return &result{Str: v, Bool: valid} }
	cases := []struct {
		cond SetIfCondition
		r    *result
		set  bool
	}{
		{SetIfCondition{NX: true}, old("", false), true},
		{SetIfCondition{NX: true}, old("a", true), false},
		{SetIfCondition{XX: true}, old("", false), false},
		{SetIfCondition{XX: true}, old("", true), true}, // an empty string is a value
		{SetIfCondition{IfEq: "a"}, old("a", true), true},
		{SetIfCondition{IfEq: "a"}, old("b", true), false},
		{SetIfCondition{IfEq: "a"}, old("", false), false},
		{SetIfCondition{IfNe: "a"}, old("a", true), false},
		{SetIfCondition{IfNe: "a"}, old("b", true), true},
		{SetIfCondition{IfNe: "a"}, old("", false), true},
	}
	for _, c := range cases {
		got := c.cond.outcome(c.r)
		assert.Equal(t, c.set, got.Set, "%+v %+v", c.cond, *c.r)
		assert.Equal(t, Null[string]{V: c.r.Str, Valid: c.r.Bool}, got.Old)
	}
}
