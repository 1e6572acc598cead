package respire

import (
	"math"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplyAnyTypes: every RESP type as Any and String give it, including
// the ones a test against a server cannot ask for on demand (pushes,
// attributes, non-string map keys).
func TestReplyAnyTypes(t *testing.T) {
	str := func(s string) resp.Value { return resp.Value{Type: resp.TypeBulkString, Str: s} }
	num := func(i int64) resp.Value { return resp.Value{Type: resp.TypeInteger, Int: i} }
	cases := []struct {
		name string
		v    resp.Value
		any  any
		text string
	}{
		{"simple", resp.Value{Type: resp.TypeSimpleString, Str: "OK"}, "OK", "OK"},
		{"bulk", str("a b"), "a b", "a b"},
		{"verbatim", resp.Value{Type: resp.TypeVerbatim, Str: "hi", Format: "txt"}, "hi", "hi"},
		{"integer", num(-7), int64(-7), "-7"},
		{"double", resp.Value{Type: resp.TypeDouble, Float: 0.5, Str: "0.5"}, 0.5, "0.5"},
		{"inf", resp.Value{Type: resp.TypeDouble, Float: math.Inf(-1), Str: "-inf"}, math.Inf(-1), "-Inf"},
		{"false", resp.Value{Type: resp.TypeBoolean}, false, "false"},
		{"big", resp.Value{Type: resp.TypeBigNumber, Str: "-12345678901234567890"}, "-12345678901234567890", "-12345678901234567890"},
		{"null", resp.Value{Type: resp.TypeNull}, nil, "(nil)"},
		{"null bulk", resp.Value{Type: resp.TypeBulkString, Null: true}, nil, "(nil)"},
		{"null array", resp.Value{Type: resp.TypeArray, Null: true}, nil, "(nil)"},
		{"array", resp.Value{Type: resp.TypeArray, Elems: []resp.Value{str("x"), {Type: resp.TypeNull}, num(1)}},
			[]any{"x", nil, int64(1)}, `["x" (nil) 1]`},
		{"set", resp.Value{Type: resp.TypeSet, Elems: []resp.Value{str("x")}}, []any{"x"}, `["x"]`},
		{"push", resp.Value{Type: resp.TypePush, Elems: []resp.Value{str("message"), str("ch"), str("hi")}},
			[]any{"message", "ch", "hi"}, `["message" "ch" "hi"]`},
		{"map", resp.Value{Type: resp.TypeMap, Elems: []resp.Value{str("b"), num(2), str("a"), {Type: resp.TypeArray, Elems: []resp.Value{num(1)}}}},
			map[string]any{"b": int64(2), "a": []any{int64(1)}}, `{"b": 2, "a": [1]}`},
		{"map int key", resp.Value{Type: resp.TypeMap, Elems: []resp.Value{num(1), str("one")}},
			map[string]any{"1": "one"}, `{1: "one"}`},
		{"attrs dropped", resp.Value{Type: resp.TypeBulkString, Str: "v", Attrs: []resp.Value{str("ttl"), num(3)}}, "v", "v"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Reply{c.v}
			assert.Equal(t, c.any, r.Any())
			assert.Equal(t, c.text, r.String())
		})
	}

	// An error nested in an aggregate is an *Error among the values.
	exec := Reply{resp.Value{Type: resp.TypeArray, Elems: []resp.Value{
		{Type: resp.TypeSimpleString, Str: "OK"},
		{Type: resp.TypeSimpleError, Str: "WRONGTYPE Operation against a key holding the wrong kind of value"},
	}}}
	v := exec.Any().([]any)
	var se *Error
	require.ErrorAs(t, v[1].(error), &se)
	assert.Equal(t, "WRONGTYPE", se.Prefix)
	assert.Equal(t, `["OK" (error) WRONGTYPE Operation against a key holding the wrong kind of value]`, exec.String())

	// The zero Reply (what a failed Do returns) prints and converts
	// without a panic.
	var zero Reply
	assert.NotPanics(t, func() { _ = zero.String(); _ = zero.Any() })
}
