package spec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func one(server string, cmds ...Command) *Spec {
	for i := range cmds {
		cmds[i].Servers = []string{server}
	}
	return &Spec{Servers: []string{server}, Commands: cmds}
}

func tok(name, token string) Argument {
	return Argument{Name: name, Type: "pure-token", Token: token}
}

func str(name string) Argument { return Argument{Name: name, Type: "string"} }

func TestMergeUnionAndNewestWins(t *testing.T) {
	old := one("redis-7.0.15",
		Command{Name: "GET", Summary: "old get", Arity: 2, Flags: []string{"readonly"}},
		Command{Name: "OLDONLY", Arity: 1},
	)
	mid := one("valkey-8.1.1",
		Command{Name: "GET", Summary: "valkey get", Arity: 2, Flags: []string{"fast", "readonly"}, Tips: []string{"x"}},
		Command{Name: "COMMANDLOG GET", Container: "COMMANDLOG", Arity: 4},
	)
	newest := one("redis-8.0.2",
		Command{Name: "GET", Summary: "new get", Arity: 2, Flags: []string{"fast", "readonly"}},
		Command{Name: "HGETEX", Arity: -5},
	)
	m := Merge(old, mid, newest)

	assert.Equal(t, []string{"redis-7.0.15", "redis-8.0.2", "valkey-8.1.1"}, m.Servers)
	names := []string{}
	for _, c := range m.Commands {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"COMMANDLOG GET", "GET", "HGETEX", "OLDONLY"}, names)

	get := m.Lookup("GET")
	assert.Equal(t, "new get", get.Summary)
	assert.Equal(t, []string{"fast", "readonly"}, get.Flags)
	assert.Nil(t, get.Tips, "fields come from the newest server as a whole")
	assert.Equal(t, []string{"redis-7.0.15", "redis-8.0.2", "valkey-8.1.1"}, get.Servers)
	assert.Equal(t, []string{"redis-7.0.15"}, m.Lookup("OLDONLY").Servers)
	assert.Equal(t, []string{"valkey-8.1.1"}, m.Lookup("COMMANDLOG GET").Servers)
	assert.Equal(t, "COMMANDLOG", m.Lookup("COMMANDLOG GET").Container)

	// The order of the call decides who wins.
	assert.Equal(t, "old get", Merge(newest, mid, old).Lookup("GET").Summary)
}

func TestMergeArgumentsInsertOlderOnlyInPlace(t *testing.T) {
	old := one("a-1", Command{Name: "C", Arguments: []Argument{
		{Name: "key", Type: "key"}, tok("gone", "GONE"), tok("nx", "NX"), tok("tail", "TAIL"),
	}})
	newest := one("a-2", Command{Name: "C", Arguments: []Argument{
		{Name: "key", Type: "key"}, tok("nx", "NX"), tok("fresh", "FRESH"),
	}})
	m := Merge(old, newest)
	args := m.Lookup("C").Arguments
	require.Len(t, args, 5)
	// "tail" follows "nx", its predecessor on the older server.
	assert.Equal(t, []string{"key", "gone", "nx", "tail", "fresh"}, argNames(args))
	assert.Nil(t, args[0].Servers, "on every server: no list")
	assert.Equal(t, []string{"a-1"}, args[1].Servers)
	assert.Nil(t, args[2].Servers)
	assert.Equal(t, []string{"a-1"}, args[3].Servers)
	assert.Equal(t, []string{"a-2"}, args[4].Servers)
}

func argNames(args []Argument) []string {
	var out []string
	for _, a := range args {
		out = append(out, a.Name)
	}
	return out
}

func TestMergeArgumentsRecursive(t *testing.T) {
	cond := func(parts ...Argument) Argument {
		return Argument{Name: "condition", Type: "oneof", Optional: true, Arguments: parts}
	}
	r70 := one("redis-7.0.15", Command{Name: "SET", Arguments: []Argument{str("value"), cond(tok("nx", "NX"), tok("xx", "XX"))}})
	v81 := one("valkey-8.1.1", Command{Name: "SET", Arguments: []Argument{str("value"), cond(tok("nx", "NX"), tok("xx", "XX"), Argument{Name: "comparison-value", Type: "string", Token: "IFEQ"})}})
	r80 := one("redis-8.0.2", Command{Name: "SET", Arguments: []Argument{str("value"), cond(tok("nx", "NX"), tok("xx", "XX"))}})
	m := Merge(r70, v81, r80)
	c := m.Lookup("SET").Arguments[1]
	assert.Nil(t, c.Servers)
	assert.Equal(t, []string{"nx", "xx", "comparison-value"}, argNames(c.Arguments))
	assert.Equal(t, []string{"valkey-8.1.1"}, c.Arguments[2].Servers)
	assert.Nil(t, c.Arguments[0].Servers)
}

func TestMergeRecognizesRenames(t *testing.T) {
	block := func(name, token string, parts ...Argument) Argument {
		return Argument{Name: name, Type: "block", Token: token, Optional: true, Arguments: parts}
	}
	old := one("redis-7.0.15", Command{Name: "C", Arguments: []Argument{
		{Name: "key", Type: "key"},
		str("groupname"), // leaf, same type, same place
		block("offset_count", "LIMIT", str("offset"), str("count")),                                         // same token
		{Name: "key_value", Type: "block", Multiple: true, Arguments: []Argument{str("key"), str("value")}}, // shared parts
		str("operation"), // refined into a oneof below
		{Name: "id", Type: "block", Token: "ID", Arguments: []Argument{str("client-id")}}, // folded into a leaf
	}})
	newest := one("redis-8.0.2", Command{Name: "C", Arguments: []Argument{
		{Name: "key", Type: "key"},
		str("group"),
		block("limit", "LIMIT", str("offset"), str("count")),
		{Name: "data", Type: "block", Multiple: true, Arguments: []Argument{str("key"), str("value")}},
		{Name: "operation", Type: "oneof", Arguments: []Argument{tok("and", "AND"), tok("or", "OR")}},
		{Name: "client-id", Type: "integer", Token: "ID"},
	}})
	m := Merge(old, newest)
	args := m.Lookup("C").Arguments
	assert.Equal(t, []string{"key", "group", "limit", "data", "operation", "client-id"}, argNames(args))
	for _, a := range args {
		assert.Nil(t, a.Servers, "%s is on both servers", a.Name)
		for _, p := range a.Arguments {
			assert.Nil(t, p.Servers, "%s/%s is on both servers", a.Name, p.Name)
		}
	}
}

func TestMergeRefinedArgumentKeepsNewerParts(t *testing.T) {
	old := one("redis-7.0.15", Command{Name: "BITOP", Arguments: []Argument{str("operation")}})
	mid := one("redis-8.0.2", Command{Name: "BITOP", Arguments: []Argument{
		{Name: "operation", Type: "oneof", Arguments: []Argument{tok("and", "AND"), tok("or", "OR")}},
	}})
	newest := one("redis-8.6.3", Command{Name: "BITOP", Arguments: []Argument{
		{Name: "operation", Type: "oneof", Arguments: []Argument{tok("and", "AND"), tok("or", "OR"), tok("diff", "DIFF")}},
	}})
	parts := Merge(old, mid, newest).Lookup("BITOP").Arguments[0].Arguments
	assert.Equal(t, []string{"and", "or", "diff"}, argNames(parts))
	assert.Nil(t, parts[0].Servers, "AND: every server")
	assert.Equal(t, []string{"redis-8.6.3"}, parts[2].Servers,
		"DIFF is newer than 8.0, which describes the parts without it, so 7.0's plain string did not take it")
}

func TestMergeDoesNotPairUnrelatedArguments(t *testing.T) {
	old := one("valkey-8.1.1", Command{Name: "SHUTDOWN", Arguments: []Argument{
		{Name: "abort-selector", Type: "oneof", Optional: true, Arguments: []Argument{
			{Name: "save-selector-block", Type: "block", Arguments: []Argument{tok("now", "NOW")}},
			tok("abort", "ABORT"),
		}},
	}})
	newest := one("redis-8.0.2", Command{Name: "SHUTDOWN", Arguments: []Argument{
		{Name: "save-selector", Type: "oneof", Optional: true, Arguments: []Argument{tok("nosave", "NOSAVE"), tok("save", "SAVE")}},
		tok("now", "NOW"),
		tok("abort", "ABORT"),
	}})
	args := Merge(old, newest).Lookup("SHUTDOWN").Arguments
	assert.Equal(t, []string{"abort-selector", "save-selector", "now", "abort"}, argNames(args))
	assert.Equal(t, []string{"valkey-8.1.1"}, args[0].Servers)
	assert.Equal(t, []string{"redis-8.0.2"}, args[3].Servers)

	// Unrelated leaves of the same type are not paired across a matched
	// neighbour.
	old = one("a-1", Command{Name: "C", Arguments: []Argument{str("x"), str("anchor")}})
	newest = one("a-2", Command{Name: "C", Arguments: []Argument{str("anchor"), str("y")}})
	args = Merge(old, newest).Lookup("C").Arguments
	assert.Equal(t, []string{"x", "anchor", "y"}, argNames(args))
}

func TestMergeArgumentsBecomePartsOfOneof(t *testing.T) {
	key := func(name, token string) Argument {
		return Argument{Name: name, Type: "key", Token: token, Optional: true}
	}
	old := one("redis-7.0.15", Command{Name: "GEORADIUS", Arguments: []Argument{
		key("key", ""), str("order"), key("key", "STORE"), key("key", "STOREDIST"),
	}})
	newest := one("redis-8.0.2", Command{Name: "GEORADIUS", Arguments: []Argument{
		key("key", ""), str("order"),
		{Name: "store", Type: "oneof", Optional: true, Arguments: []Argument{key("storekey", "STORE"), key("storedistkey", "STOREDIST")}},
	}})
	args := Merge(old, newest).Lookup("GEORADIUS").Arguments
	assert.Equal(t, []string{"key", "order", "store"}, argNames(args))
	assert.Nil(t, args[2].Servers)
	assert.Nil(t, args[2].Arguments[0].Servers)
	assert.Nil(t, args[2].Arguments[1].Servers)

	// A token that moved from a block into one of its parts.
	old = one("redis-7.0.15", Command{Name: "XINFO STREAM", Arguments: []Argument{
		{Name: "full", Type: "block", Token: "FULL", Optional: true, Arguments: []Argument{{Name: "count", Type: "integer", Token: "COUNT", Optional: true}}},
	}})
	newest = one("redis-8.0.2", Command{Name: "XINFO STREAM", Arguments: []Argument{
		{Name: "full-block", Type: "block", Optional: true, Arguments: []Argument{tok("full", "FULL"), {Name: "count", Type: "integer", Token: "COUNT", Optional: true}}},
	}})
	args = Merge(old, newest).Lookup("XINFO STREAM").Arguments
	require.Len(t, args, 1)
	assert.Nil(t, args[0].Servers)
	assert.Nil(t, args[0].Arguments[0].Servers)
}

func TestMergeIsPureAndDeterministic(t *testing.T) {
	build := func() []*Spec {
		return []*Spec{
			one("redis-7.0.15", Command{Name: "B", Flags: []string{"write"}, Arguments: []Argument{str("a"), tok("old", "OLD")}}, Command{Name: "A"}),
			one("redis-8.0.2", Command{Name: "B", Flags: []string{"write"}, Arguments: []Argument{str("a"), tok("new", "NEW")}}),
		}
	}
	in := build()
	before, err := json.Marshal(in)
	require.NoError(t, err)
	first, err := Merge(in...).Marshal()
	require.NoError(t, err)
	after, err := json.Marshal(in)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "inputs unchanged")

	second, err := Merge(build()...).Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second))

	// Merging a merge with nothing new changes nothing.
	m := Merge(build()...)
	third, err := Merge(m).Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(first), string(third))
}

func TestMergeOfMergedSpecs(t *testing.T) {
	a := one("redis-7.0.15", Command{Name: "C", Arguments: []Argument{str("x"), tok("old", "OLD")}})
	b := one("valkey-8.1.1", Command{Name: "C", Arguments: []Argument{str("x")}})
	c := one("redis-8.0.2", Command{Name: "C", Arguments: []Argument{str("x"), tok("new", "NEW")}})
	flat, err := Merge(a, b, c).Marshal()
	require.NoError(t, err)
	nested, err := Merge(Merge(a, b), c).Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(flat), string(nested))
}
