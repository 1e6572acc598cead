package gen

// Doc comments of the generated methods.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/respire-go/respire/gen/spec"
)

// sentence lowers the first letter of a summary so that it can follow the
// method name: "Returns the value" -> "returns the value".
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[0]) && unicode.IsLower(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	s = string(r)
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

var backticked = regexp.MustCompile("`!?([A-Z][A-Z_ -]*[A-Z])`")

// goRefs rewrites spec text for Go readers: a `COMMAND` of the spec becomes
// its method name, an `!ARGUMENT` (the spec's mark for arguments) its token.
func (g *generator) goRefs(s string) string {
	return backticked.ReplaceAllStringFunc(s, func(m string) string {
		name := strings.Trim(m, "`")
		if arg, ok := strings.CutPrefix(name, "!"); ok {
			return arg
		}
		if g.cfg.Spec.Lookup(name) != nil {
			if n, err := MethodName(name); err == nil {
				return n
			}
		}
		return name
	})
}

func (g *generator) deprecation(c *spec.Command) string {
	deprecated := c.DeprecatedSince != ""
	for _, f := range c.DocFlags {
		if f == "deprecated" {
			deprecated = true
		}
	}
	if !deprecated {
		return ""
	}
	s := "Deprecated: "
	if c.DeprecatedSince != "" {
		s += "deprecated since " + c.DeprecatedSince
	} else {
		s += "deprecated"
	}
	if c.ReplacedBy != "" {
		s += "; use " + g.goRefs(c.ReplacedBy) + " instead"
	}
	return s + "."
}

// ownWrites are the commands whose reply is about the writes made on the
// connection they run on, which a Client refuses sent by themselves
// (respire/wait.go); their methods' docs say so.
var ownWrites = map[string]bool{"WAIT": true, "WAITAOF": true}

func (g *generator) methodDoc(m *method) []string {
	c := m.cmd
	var out []string
	summary := sentence(c.Summary)
	if summary == "" {
		summary = "runs " + c.Name + "."
	}
	out = append(out, wrap(m.name+" "+g.goRefs(summary), 100)...)
	if m.base != "" {
		var sel []string
		for _, s := range m.forced {
			if s == strings.ToUpper(s) {
				sel = append(sel, s)
			} else {
				sel = append(sel, "the "+s+" argument")
			}
		}
		var may []string
		if m.variant != nil {
			may = m.variant.Optional
		}
		text := fmt.Sprintf("This form sends %s, which changes the reply; %s is the form without.", strings.Join(sel, " and "), m.base)
		switch {
		case len(sel) == 0:
			text = fmt.Sprintf("This form has the options %s, which change the reply (the parts not asked for are zero); %s is the form without.",
				strings.Join(may, ", "), m.base)
		case len(may) > 0:
			text = fmt.Sprintf("This form sends %s and has the options %s, which change the reply; %s is the form without.",
				strings.Join(sel, " and "), strings.Join(may, ", "), m.base)
		}
		out = append(out, "")
		out = append(out, wrap(text, 100)...)
	}
	if note := expiryNote(m.reply); note != "" {
		out = append(out, "")
		out = append(out, wrap(note, 100)...)
	}
	if rawArgs(c) {
		out = append(out, "", "The spec does not describe the arguments of "+c.Name+" (COMMAND DOCS lists none), so they are",
			"passed as they are, after the key when the command has one.")
	}
	for _, s := range m.c.params {
		if s.a.hasDefault {
			tok := s.a.Default
			if tok == "" {
				tok = `""`
			}
			out = append(out, "", fmt.Sprintf("An empty %s sends %s.", s.name, tok))
		}
		if note := unitNote(s.a); note != "" && s.a.scalar != scUnixSeconds && s.a.scalar != scUnixMillis {
			out = append(out, "")
			out = append(out, wrap(s.name+" is sent "+strings.TrimPrefix(note, ", ")+".", 100)...)
		}
	}
	if ownWrites[c.Name] {
		out = append(out, "")
		out = append(out, wrap("A Client refuses it sent by itself, with an *ArgError: the server counts the "+
			"acknowledgements of the writes made on the connection it runs on, and it would run on a connection that "+
			"carries none of the caller's. Queue it in the Batch that makes the writes (Batch."+m.name+"), or make "+
			"the writes and "+c.Name+" on a connection of your own (Client.WithConn).", 100)...)
	}
	var facts []string
	if c.Since != "" {
		facts = append(facts, "Since "+c.Since+".")
	}
	if c.Complexity != "" {
		facts = append(facts, "Complexity: "+strings.TrimSuffix(c.Complexity, ".")+".")
	}
	if len(c.Servers) > 0 && len(c.Servers) < len(g.cfg.Spec.Servers) {
		facts = append(facts, "Only on "+strings.Join(c.Servers, ", ")+".")
	}
	if len(facts) > 0 {
		out = append(out, "")
		out = append(out, wrap(strings.Join(facts, " "), 100)...)
	}
	if dep := g.deprecation(c); dep != "" {
		out = append(out, "", dep)
	}
	return out
}

// expiryNote documents the special values of a TTL or expiry time reply
// (ttl, pttl, deadline, pdeadline; alone or one per field).
func expiryNote(t *Type) string {
	if t == nil {
		return ""
	}
	perField := false
	if t.Kind == KindList {
		perField, t = true, t.Elem
	}
	var none string
	switch t.Kind {
	case KindTTL, KindPTTL:
		none = "NoExpiry"
	case KindDeadline, KindPDeadline:
		none = "the zero time"
	default:
		return ""
	}
	if perField {
		return "One value per field asked for: not Valid for a field that does not exist (or a missing key), " +
			none + " for a field without expiry."
	}
	return "A key without expiry gives " + none + "; a missing key gives the error Nil."
}

// wrap breaks s into lines of at most width characters.
func wrap(s string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			out = append(out, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
