package spec

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseIsStrict(t *testing.T) {
	s, err := Parse([]byte(`{"servers":["redis-7.0.15"],"commands":[{"name":"GET","group":"string","arity":2,"first_key":1,"last_key":1,"key_step":1,"servers":["redis-7.0.15"]}]}`))
	require.NoError(t, err)
	require.Len(t, s.Commands, 1)
	for name, in := range map[string]string{
		"unknown field":      `{"servers":[],"commands":[{"name":"GET","aritty":2}]}`,
		"data after it":      `{"servers":[],"commands":[]} {}`,
		"not an object":      `[]`,
		"empty":              ``,
		"wrong type":         `{"servers":"redis","commands":[]}`,
		"unknown spec field": `{"commands":[{"key_specs":[{"begin_search":{"type":"index","spec":{"idx":1}}}]}]}`,
	} {
		_, err := Parse([]byte(in))
		assert.Error(t, err, name)
	}
}

// FuzzSpecParse feeds arbitrary bytes to Parse, the reader of
// spec/commands.json. It must never panic, and what it accepts must write
// out (Marshal) to a file that parses again and writes out to the same
// bytes: normalizing is stable. Seeds: testdata/fuzz/FuzzSpecParse (small
// ones: the fuzzer crawls on inputs the size of a whole spec).
func FuzzSpecParse(f *testing.F) {
	f.Add([]byte(`{"servers":[],"commands":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("a parsed spec does not marshal: %v", err)
		}
		s2, err := Parse(out)
		if err != nil {
			t.Fatalf("a marshaled spec does not parse: %v\n%s", err, out)
		}
		out2, err := s2.Marshal()
		if err != nil {
			t.Fatalf("a re-parsed spec does not marshal: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("normalizing is not stable:\n%s\nthen\n%s", out, out2)
		}
		for _, c := range s.Commands {
			_ = s.Lookup(c.Name)
		}
	})
}
