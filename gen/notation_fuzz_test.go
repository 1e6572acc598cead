package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseReplies feeds arbitrary text to ParseReplies, the parser of
// spec/replies.txt. It must never panic; what it accepts must have line
// numbers inside the text, named types that resolve, and types whose
// canonical notation (Type.String) parses back to itself. Seeds:
// testdata/fuzz/FuzzParseReplies.
func FuzzParseReplies(f *testing.F) {
	f.Add("type P = (member:str, score:float)\nZRANGE: [str] ; WITHSCORES => [P]\n")
	f.Add("INFO: <a:int, \"b c\":str?,\n  d:{str:[int?]}>\nX: - not callable\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseReplies("replies.txt", text)
		if err != nil {
			return
		}
		lines := strings.Count(text, "\n") + 1
		check := func(what string, line int, typ *Type) {
			if line < 1 || line > lines {
				t.Fatalf("%s: line %d of a %d-line text", what, line, lines)
			}
			if typ == nil {
				return
			}
			_ = r.Resolve(typ)
			s := typ.String()
			again, perr := parseType(s, 1)
			if perr != nil {
				t.Fatalf("%s: canonical form %q does not parse: %s", what, s, perr.msg)
			}
			if again.String() != s {
				t.Fatalf("%s: canonical form %q parses to %q", what, s, again.String())
			}
		}
		for name, d := range r.Types {
			check("type "+name, d.Line, d.Type)
		}
		for name, e := range r.Entries {
			check(name, e.Line, e.Reply)
			for _, v := range e.Variants {
				check(name+" variant", v.Line, v.Reply)
			}
		}
		// The whole file, written out canonically, parses to the same.
		canon := formatReplies(r)
		r2, err := ParseReplies("again.txt", canon)
		if err != nil {
			t.Fatalf("canonical file does not parse: %v\n%s", err, canon)
		}
		if again := formatReplies(r2); again != canon {
			t.Fatalf("canonical file\n%s\nparses to\n%s", canon, again)
		}
	})
}

// formatReplies writes r in canonical notation, one statement a line.
func formatReplies(r *Replies) string {
	var b strings.Builder
	for _, name := range sortedKeys(r.Types) {
		fmt.Fprintf(&b, "type %s = %s\n", name, r.Types[name].Type)
	}
	for _, name := range sortedKeys(r.Entries) {
		e := r.Entries[name]
		if e.Reply == nil {
			tag := ""
			if e.Setup {
				tag = setupTag + " "
			}
			fmt.Fprintf(&b, "%s: - %s%s\n", name, tag, e.Excluded)
			continue
		}
		fmt.Fprintf(&b, "%s: %s", name, e.Reply)
		for _, v := range e.Variants {
			b.WriteString(" ; " + strings.Join(v.Selectors, "+"))
			if v.Method != "" {
				b.WriteString(" as " + v.Method)
			}
			fmt.Fprintf(&b, " => %s", v.Reply)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// A quoted field name has no escapes: a backslash in it does not hide the
// closing quote from the statement splitter, so the next entry is read on
// its own.
func TestQuotedNameWithBackslash(t *testing.T) {
	r, err := ParseReplies("replies.txt", "X: <\"a\\\":int> # \"\nY: str\n")
	require.NoError(t, err)
	assert.Equal(t, `<"a\":int>`, r.Entries["X"].Reply.String())
	assert.Equal(t, "str", r.Entries["Y"].Reply.String())
}
