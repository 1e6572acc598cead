package gen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRepliesGood(t *testing.T) {
	src := `# a comment
type ScoredMember = (member:str, score:float)   # trailing comment
type Info = <length:int, "radix tree":int, last-id:str?,
             first:ScoredMember?>

GET: str?
SET: ok? ; GET => str?
ZRANGE: [str] ; WITHSCORES => [ScoredMember]
GEOSEARCH: [str] ; WITHCOORD+[WITHDIST] as GeoSearchLocations => [(name:str, dist?:float)]
HGETALL: {str:str}
OBJECT ENCODING: status
X: (int | str)?
Y: int | str
Z: [{str:[int?]}]?
SUBSCRIBE: - puts the connection in subscriber mode (use Subscribe)
CLIENT SETNAME: - [setup] names the connection (use Options.ClientName)
INFO: <
  a:int,
  b:str,
>
`
	r, err := ParseReplies("replies.txt", src)
	require.NoError(t, err)
	assert.Len(t, r.Types, 2)
	want := map[string]string{
		"GET": "str?", "SET": "ok?", "ZRANGE": "[str]", "HGETALL": "{str:str}", "OBJECT ENCODING": "status",
		"X": "(int | str)?", "Y": "int | str", "Z": "[{str:[int?]}]?", "INFO": "<a:int, b:str>",
		"GEOSEARCH": "[str]",
	}
	for name, typ := range want {
		e := r.Entries[name]
		require.NotNil(t, e, name)
		assert.Equal(t, typ, e.Reply.String(), name)
	}
	assert.Equal(t, `<length:int, "radix tree":int, last-id:str?, first:ScoredMember?>`, r.Types["Info"].Type.String())
	assert.Equal(t, 3, r.Types["Info"].Line)
	set := r.Entries["SET"]
	require.Len(t, set.Variants, 1)
	assert.Equal(t, []string{"GET"}, set.Variants[0].Selectors)
	assert.Equal(t, "str?", set.Variants[0].Reply.String())
	geo := r.Entries["GEOSEARCH"].Variants[0]
	assert.Equal(t, []string{"WITHCOORD"}, geo.Selectors)
	assert.Equal(t, []string{"WITHDIST"}, geo.Optional, "[SEL]: an option of this form only")
	assert.Equal(t, "GeoSearchLocations", geo.Method)
	assert.Equal(t, "[(name:str, dist?:float)]", geo.Reply.String())
	sub := r.Entries["SUBSCRIBE"]
	assert.Nil(t, sub.Reply)
	assert.Equal(t, "puts the connection in subscriber mode (use Subscribe)", sub.Excluded)
	assert.False(t, sub.Setup)
	setName := r.Entries["CLIENT SETNAME"]
	assert.Nil(t, setName.Reply)
	assert.True(t, setName.Setup, "[setup]: Options.OnConnect may send it")
	assert.Equal(t, "names the connection (use Options.ClientName)", setName.Excluded)
	assert.Equal(t, 17, r.Entries["INFO"].Line)
}

func TestParseRepliesRoundTrip(t *testing.T) {
	// String gives notation that parses back to the same type.
	for _, s := range []string{"str", "[int?]", "{str:(a:int, b:[str])}", "<x:float, \"a b\":bool>?", "any | [any]", "(str | int)?", "[(a:str, b?:int, c?:[str])]"} {
		r, err := ParseReplies("f", "A: "+s)
		require.NoError(t, err, s)
		again, err := ParseReplies("f", "A: "+r.Entries["A"].Reply.String())
		require.NoError(t, err, s)
		assert.Equal(t, r.Entries["A"].Reply.String(), again.Entries["A"].Reply.String())
	}
}

func TestParseRepliesErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"GET str", "f:1: want NAME: TYPE"},
		{"get: str", `f:1: command name "get" must be uppercase`},
		{"GET: strr", `f:1: GET: unknown type "strr"`},
		{"GET: [str", `f:1: GET: missing ']' at the end`},
		{"\n\nGET: {str:int", `f:3: GET: missing '}' at the end`},
		{"GET: Foo", "f:1: unknown type Foo"},
		{"GET: str\nGET: int", "f:2: GET has a second entry (the first is at line 1)"},
		{"GET: -", "f:1: GET: an exclusion needs a reason"},
		{"GET: - [setup]", "f:1: GET: an exclusion needs a reason"},
		{"GET: str ; WITHX", `f:1: GET: variant "WITHX": want SEL => TYPE`},
		{"GET: str ; A as lower => int", `f:1: GET: variant: "lower" after as is not an exported Go name`},
		{"type A = (x:A)", "f:1: type A refers to itself"},
		{"type A = [B]\ntype B = {str:A}", "refers to itself"},
		{"type A = int\ntype A = str", "f:2: type A is already declared at line 1"},
		{"GET: {[str]:int}", "map key [str] must be str, int, float or bool"},
		{"GET: (a:int, a:str)", "field a appears twice"},
		{"GET: str??", "is already nullable"},
		{"GET: (a:ok)", "ok is only a whole reply"},
		{"GET: <a:int,\n  b:strr>", `f:2: GET: unknown type "strr"`},
		{"GET: str extra", `unexpected "extra" after the type`},
		{"GET: (a?:int, b:str)", "the first field of a tuple is always sent"},
		{"GET: (a:int, b?:str, c:int)", "the fields after an optional one are optional too"},
	}
	for _, c := range cases {
		_, err := ParseReplies("f", c.src)
		if assert.Error(t, err, c.src) {
			assert.Contains(t, err.Error(), c.want, c.src)
		}
	}
}

func TestParseRepliesReportsEveryError(t *testing.T) {
	_, err := ParseReplies("f", "A: nope\nB: int\nC: [\n")
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	assert.Len(t, lines, 2)
	assert.Contains(t, lines[0], "f:1:")
	assert.Contains(t, lines[1], "f:3:")
}

// TestRepliesFileParses checks the real notation file.
func TestRepliesFileParses(t *testing.T) {
	_, err := LoadReplies("../spec/replies.txt")
	require.NoError(t, err)
}
