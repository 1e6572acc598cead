package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleSpec() *Spec {
	return &Spec{
		Servers: []string{"valkey-8.1.1", "redis-10.0.0", "redis-8.0.2"},
		Commands: []Command{
			{
				Name: "SET", Group: "string", Arity: -3,
				Flags:         []string{"write", "denyoom"},
				ACLCategories: []string{"write", "string", "slow"},
				FirstKey:      1, LastKey: 1, KeyStep: 1,
				KeySpecs: []KeySpec{{
					BeginSearch: BeginSearch{Type: "index", Spec: BeginSearchSpec{Index: 1}},
					FindKeys:    FindKeys{Type: "range", Spec: FindKeysSpec{LastKey: 0, KeyStep: 1}},
					Flags:       []string{"update", "RW", "access"},
				}},
				Arguments: []Argument{
					{Name: "key", Type: "key", KeySpecIndex: 0},
					{Name: "value", Type: "string"},
					{Name: "get", Type: "pure-token", Token: "GET", Optional: true, Servers: []string{"valkey-8.1.1", "redis-8.0.2"}},
				},
				Servers: []string{"valkey-8.1.1", "redis-8.0.2", "redis-10.0.0"},
			},
			{
				Name: "CLIENT KILL", Container: "CLIENT", Group: "connection", Arity: -3,
				Tips:    []string{"request_policy:all_nodes", "nondeterministic_output"},
				Servers: []string{"redis-8.0.2"},
			},
			{Name: "CLIENT", Group: "connection", Arity: -2, Servers: []string{"redis-8.0.2"}},
		},
	}
}

func TestMarshalNormalizes(t *testing.T) {
	s := sampleSpec()
	data, err := s.Marshal()
	require.NoError(t, err)

	assert.True(t, bytes.HasSuffix(data, []byte("}\n")), "trailing newline")
	assert.True(t, bytes.HasPrefix(data, []byte("{\n  \"servers\": [\n    \"redis-8.0.2\",\n    \"redis-10.0.0\",\n    \"valkey-8.1.1\"\n  ],\n")), "servers sorted by product then version:\n%s", data)

	text := string(data)
	assertOrder(t, text, `"name": "CLIENT"`, `"name": "CLIENT KILL"`, `"name": "SET"`)
	assertOrder(t, text, `"nondeterministic_output"`, `"request_policy:all_nodes"`)
	assertOrder(t, text, `"denyoom"`, `"write"`)
	assertOrder(t, text, `"RW"`, `"access"`, `"update"`)
	// Fields keep schema order.
	assertOrder(t, text, `"name": "SET"`, `"group"`, `"arity"`, `"flags"`, `"acl_categories"`, `"first_key"`, `"key_specs"`, `"arguments"`)

	// The input is left alone.
	assert.Equal(t, "SET", s.Commands[0].Name)
	assert.Equal(t, []string{"write", "denyoom"}, s.Commands[0].Flags)
	assert.Equal(t, "valkey-8.1.1", s.Servers[0])

	again, err := s.Marshal()
	require.NoError(t, err)
	assert.Equal(t, data, again, "Marshal is stable")
}

func assertOrder(t *testing.T, text string, parts ...string) {
	t.Helper()
	last := -1
	for _, p := range parts {
		i := strings.Index(text[last+1:], p)
		if !assert.GreaterOrEqual(t, i, 0, "%q missing or out of order", p) {
			return
		}
		last += 1 + i
	}
}

func TestMarshalKeySpecIndexOnlyForKeys(t *testing.T) {
	s := &Spec{Commands: []Command{{Name: "X", Arguments: []Argument{
		{Name: "key", Type: "key", KeySpecIndex: 0},
		{Name: "n", Type: "integer"},
	}}}}
	data, err := s.Marshal()
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "key_spec_index"))
	assert.Contains(t, string(data), `"key_spec_index": 0`)
}

func TestMarshalKeySpecWritesOnlyItsTypeFields(t *testing.T) {
	cases := []struct {
		ks   KeySpec
		want string
	}{
		{
			KeySpec{BeginSearch: BeginSearch{Type: "index", Spec: BeginSearchSpec{Index: 2, Keyword: "ignored"}},
				FindKeys: FindKeys{Type: "range", Spec: FindKeysSpec{LastKey: -1, KeyStep: 1, Limit: 2, FirstKey: 9}}},
			`{"begin_search":{"type":"index","spec":{"index":2}},"find_keys":{"type":"range","spec":{"lastkey":-1,"keystep":1,"limit":2}}}`,
		},
		{
			KeySpec{BeginSearch: BeginSearch{Type: "keyword", Spec: BeginSearchSpec{Keyword: "STREAMS", StartFrom: 1}},
				FindKeys: FindKeys{Type: "keynum", Spec: FindKeysSpec{KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}},
			`{"begin_search":{"type":"keyword","spec":{"keyword":"STREAMS","startfrom":1}},"find_keys":{"type":"keynum","spec":{"keynumidx":0,"firstkey":1,"keystep":1}}}`,
		},
		{
			KeySpec{BeginSearch: BeginSearch{Type: "unknown"}, FindKeys: FindKeys{Type: "unknown"}, Notes: "n"},
			`{"begin_search":{"type":"unknown","spec":{}},"find_keys":{"type":"unknown","spec":{}},"notes":"n"}`,
		},
	}
	for _, c := range cases {
		data, err := (&Spec{Commands: []Command{{Name: "X", KeySpecs: []KeySpec{c.ks}}}}).Marshal()
		require.NoError(t, err)
		assert.Contains(t, compact(t, data), c.want)
	}
}

func compact(t *testing.T, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString(strings.TrimSpace(line))
	}
	return strings.ReplaceAll(b.String(), `": `, `":`)
}

func TestLoadRoundTrip(t *testing.T) {
	data, err := sampleSpec().Marshal()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "commands.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))

	s, err := Load(path)
	require.NoError(t, err)
	again, err := s.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again))

	set := s.Lookup("set")
	require.NotNil(t, set)
	assert.Equal(t, 0, set.Arguments[0].KeySpecIndex)
	assert.Equal(t, "range", set.KeySpecs[0].FindKeys.Type)
	assert.Equal(t, 1, set.KeySpecs[0].FindKeys.Spec.KeyStep)
	assert.Equal(t, []string{"redis-8.0.2", "valkey-8.1.1"}, set.Arguments[2].Servers)
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.json"))
	assert.Error(t, err)

	path := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, err = Load(path)
	assert.ErrorContains(t, err, "bad.json")
}

func TestLookup(t *testing.T) {
	s := sampleSpec()
	assert.Equal(t, "CLIENT KILL", s.Lookup("client   kill").Name)
	assert.Equal(t, "CLIENT", s.Lookup("CLIENT").Name)
	assert.Nil(t, s.Lookup("CLIENT LIST"))
	s.Lookup("set").Summary = "changed"
	assert.Equal(t, "changed", s.Commands[0].Summary, "Lookup points into the spec")
}

func TestCompareServers(t *testing.T) {
	assert.Negative(t, CompareServers("redis-7.0.15", "redis-8.0.2"))
	assert.Negative(t, CompareServers("redis-8.0.2", "redis-10.0.0"))
	assert.Negative(t, CompareServers("redis-8.0.2", "valkey-7.2.4"))
	assert.Negative(t, CompareServers("redis-8.0.2", "redis-8.0.10"))
	assert.Zero(t, CompareServers("valkey-8.1.1", "valkey-8.1.1"))
}

func TestCompareForMerge(t *testing.T) {
	r70 := Server{ID: "redis-7.0.15", RedisVersion: "7.0.15"}
	v81 := Server{ID: "valkey-8.1.1", RedisVersion: "7.2.4"}
	r80 := Server{ID: "redis-8.0.2", RedisVersion: "8.0.2"}
	assert.Negative(t, CompareForMerge(r70, v81))
	assert.Negative(t, CompareForMerge(v81, r80))
	assert.Negative(t, CompareForMerge(r70, r80))
}
