package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/gen/spec"
)

func TestSupplement(t *testing.T) {
	sp := &spec.Spec{Servers: []string{"redis-8.0.2", "redis-8.6.3"}, Commands: []spec.Command{{
		Name: "VSIM", Servers: []string{"redis-8.0.2", "redis-8.6.3"},
		Arguments: []spec.Argument{
			{Name: "key", Type: "key", Servers: []string{"redis-8.6.3"}},
			{Name: "format", Type: "oneof", Servers: []string{"redis-8.6.3"}, Arguments: []spec.Argument{
				{Name: "ele", Type: "pure-token", Token: "ELE"}}},
			{Name: "vector", Type: "string", Servers: []string{"redis-8.6.3"}},
			{Name: "withattribs", Type: "pure-token", Token: "WITHATTRIBS", Optional: true, Servers: []string{"redis-8.6.3"}},
		},
	}}}
	query := []spec.Argument{{Name: "query", Type: "oneof", Arguments: []spec.Argument{{Name: "element", Type: "string", Token: "ELE"}}}}
	sup := &Supplement{File: "sup.json", Commands: []SupplementCommand{{
		Name:    "VSIM",
		Replace: []SupplementReplace{{Path: "vector", With: nil}, {Path: "format", With: query}},
		Lacks:   map[string][]string{"redis-8.0.2": {"WITHATTRIBS"}},
	}}}
	out, lacks, notes, err := applySupplement(sp, sup)
	require.NoError(t, err)
	assert.Empty(t, notes)
	assert.Len(t, sp.Commands[0].Arguments, 4, "the input is not modified")
	args := out.Commands[0].Arguments
	require.Len(t, args, 3)
	assert.Equal(t, "query", args[1].Name)
	assert.Equal(t, map[string][]string{"redis-8.0.2": {"WITHATTRIBS"}}, lacks["VSIM"])
	built := buildArgs(&out.Commands[0])
	require.NoError(t, applyLacks(built, &out.Commands[0], lacks["VSIM"]))
	assert.Nil(t, built[0].Servers, "an undocumented server is taken to have the arguments")
	assert.Equal(t, []string{"redis-8.6.3"}, built[2].Servers, "but not those it lacks")

	// Once the servers' docs say the same, the generator says so.
	_, _, notes, err = applySupplement(out, &Supplement{File: "sup.json", Commands: []SupplementCommand{{
		Name: "VSIM", Replace: []SupplementReplace{{Path: "query", With: query}},
		Lacks: map[string][]string{"redis-8.0.2": {"WITHATTRIBS"}},
	}}})
	require.NoError(t, err)
	require.Len(t, notes, 2)
	assert.Contains(t, notes[0], "the servers' docs now describe query of VSIM as the supplement does")
	assert.Contains(t, notes[1], "redis-8.0.2's docs now describe the arguments of VSIM")

	_, _, _, err = applySupplement(sp, &Supplement{File: "sup.json", Commands: []SupplementCommand{
		{Name: "NOSUCH"},
		{Name: "VSIM", Replace: []SupplementReplace{{Path: "format/nope", With: query}}, Lacks: map[string][]string{"valkey-9.1.2": nil}},
	}})
	assert.ErrorContains(t, err, "sup.json: NOSUCH: not a command of the spec")
	assert.ErrorContains(t, err, `sup.json: VSIM: replace format/nope: no argument "nope"`)
	assert.ErrorContains(t, err, "sup.json: VSIM: lacks: valkey-9.1.2 does not have the command")
}

func TestSupplementFileLoads(t *testing.T) {
	sup, err := LoadSupplement("../spec/supplement.json")
	require.NoError(t, err)
	assert.NotEmpty(t, sup.Commands)
	for _, c := range sup.Commands {
		assert.NotEmpty(t, c.Why, "%s: say why", c.Name)
	}
}

func TestSupplementTypesAndZero(t *testing.T) {
	sp := &spec.Spec{Servers: []string{"redis-8.6.3"}, Commands: []spec.Command{{
		Name: "ZCOUNT", Servers: []string{"redis-8.6.3"},
		Arguments: []spec.Argument{
			{Name: "key", Type: "key"},
			{Name: "min", Type: "double"},
			{Name: "count", Type: "integer", Token: "COUNT", Optional: true},
			{Name: "limit", Type: "integer", Token: "LIMIT", Optional: true},
			{Name: "db", Type: "integer", Token: "DB", Optional: true},
		},
	}}}
	sup := &Supplement{File: "sup.json", Commands: []SupplementCommand{{
		Name: "ZCOUNT", Types: map[string]string{"min": "string"}, Zero: map[string]string{"COUNT": "returns all"},
	}}}
	out, _, notes, err := applySupplement(sp, sup)
	require.NoError(t, err)
	assert.Empty(t, notes)
	assert.Equal(t, "double", sp.Commands[0].Arguments[1].Type, "the input is not modified")
	assert.Equal(t, "string", out.Commands[0].Arguments[1].Type)

	built := buildArgs(&out.Commands[0])
	require.NoError(t, applyZero(built, &out.Commands[0], sup.Commands[0].Zero))
	assert.Equal(t, fPtr, formOf(built[2], true), "COUNT 0 is a value of its own: a pointer")
	assert.Equal(t, fZero, formOf(built[3], true), "LIMIT 0 is not: a plain value")
	assert.Equal(t, fPtr, formOf(built[4], true), "a database index counts from 0, by rule")

	err = applyZero(built, &out.Commands[0], map[string]string{"NOPE": "x", "min": "y"})
	assert.ErrorContains(t, err, "zero: ZCOUNT has no argument NOPE")
	assert.ErrorContains(t, err, "zero: min of ZCOUNT is not a number")

	_, _, notes, err = applySupplement(out, sup)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "the servers' docs now give min of ZCOUNT the type string")
}
