package gen

import (
	"fmt"
	"strings"
)

// The parser of the reply notation: statements, entries, variants and
// types.

type statement struct {
	text string
	line int
}

// statements splits the file into entries: comments removed, a statement
// continuing onto the next lines while a bracket is open.
func statements(text string) []statement {
	var out []statement
	var cur strings.Builder
	start, depth := 0, 0
	for n, line := range strings.Split(text, "\n") {
		line = stripComment(line)
		if strings.TrimSpace(line) == "" && depth == 0 {
			continue
		}
		if depth == 0 {
			start = n + 1
			cur.Reset()
		} else {
			cur.WriteByte('\n')
		}
		cur.WriteString(strings.TrimSpace(line))
		if !isExclusion(cur.String()) {
			depth = bracketDepth(cur.String())
		} else {
			depth = 0
		}
		if depth <= 0 {
			out = append(out, statement{cur.String(), start})
			depth = 0
		}
	}
	if depth > 0 {
		out = append(out, statement{cur.String(), start})
	}
	return out
}

// stripComment removes a '#' comment that is not inside double quotes.
// Quotes have no escapes: a quoted field name ends at the next '"'.
func stripComment(line string) string {
	inQuote := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			inQuote = !inQuote
		case '#':
			if !inQuote {
				return line[:i]
			}
		}
	}
	return line
}

func isExclusion(s string) bool {
	i := strings.IndexByte(s, ':')
	return i >= 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "-")
}

// bracketDepth counts brackets still open in s ("=>" is not a bracket).
func bracketDepth(s string) int {
	depth, inQuote := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '=' && i+1 < len(s) && s[i+1] == '>':
			i++
		case c == '(' || c == '[' || c == '{' || c == '<':
			depth++
		case c == ')' || c == ']' || c == '}' || c == '>':
			depth--
		}
	}
	return depth
}

// typeDefHead recognizes "type Name = ...".
func typeDefHead(s string) (name, rest string, ok bool) {
	after, found := strings.CutPrefix(s, "type ")
	if !found {
		return "", "", false
	}
	name, rest, found = strings.Cut(after, "=")
	if !found || strings.HasPrefix(rest, ">") {
		return "", "", false
	}
	name = strings.TrimSpace(name)
	if !isTypeName(name) {
		return "", "", false
	}
	return name, rest, true
}

func isTypeName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

type notationError struct {
	line int
	msg  string
}

func (e *notationError) Error() string { return e.msg }

// setupTag starts the reason of an exclusion that Options.OnConnect may
// still send: "NAME: - [setup] reason".
const setupTag = "[setup]"

// parseEntry parses "NAME: TYPE [; SEL => TYPE]...", "NAME: - reason" and
// "NAME: - [setup] reason".
func parseEntry(s string, line int) (*Entry, *notationError) {
	head, body, ok := strings.Cut(s, ":")
	if !ok {
		return nil, &notationError{line, fmt.Sprintf("want NAME: TYPE, NAME: - reason or type Name = TYPE, got %q", s)}
	}
	name := strings.Join(strings.Fields(head), " ")
	if name == "" || name != strings.ToUpper(name) {
		return nil, &notationError{line, fmt.Sprintf("command name %q must be uppercase, as in the spec", name)}
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == ' ' || c == '|' || c == '.') {
			return nil, &notationError{line, fmt.Sprintf("command name %q has a character %q that no command has", name, c)}
		}
	}
	e := &Entry{Command: name, Line: line}
	body = strings.TrimSpace(body)
	if reason, ok := strings.CutPrefix(body, "-"); ok {
		reason = strings.TrimSpace(reason)
		if r, ok := strings.CutPrefix(reason, setupTag); ok {
			e.Setup, reason = true, r
		}
		e.Excluded = strings.TrimSpace(reason)
		if e.Excluded == "" {
			return nil, &notationError{line, name + ": an exclusion needs a reason: NAME: - reason"}
		}
		return e, nil
	}
	line += strings.Count(head, "\n")
	parts := splitTop(body, ';')
	t, err := parseType(parts[0], line)
	if err != nil {
		return nil, &notationError{err.line, name + ": " + err.msg}
	}
	e.Reply = t
	line += strings.Count(parts[0], "\n")
	for _, p := range parts[1:] {
		v, err := parseVariant(p, line)
		line += strings.Count(p, "\n")
		if err != nil {
			return nil, &notationError{err.line, name + ": " + err.msg}
		}
		e.Variants = append(e.Variants, v)
	}
	return e, nil
}

// splitTop splits s at sep outside brackets and quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, inQuote, last := 0, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '=' && i+1 < len(s) && s[i+1] == '>':
			i++
		case strings.IndexByte("([{<", c) >= 0:
			depth++
		case strings.IndexByte(")]}>", c) >= 0:
			depth--
		case c == sep && depth == 0:
			out = append(out, s[last:i])
			last = i + 1
		}
	}
	return append(out, s[last:])
}

// parseVariant parses "SEL[+SEL...] [as Name] => TYPE".
func parseVariant(s string, line int) (Variant, *notationError) {
	lhs, rhs, ok := strings.Cut(s, "=>")
	if !ok {
		return Variant{}, &notationError{line, fmt.Sprintf("variant %q: want SEL => TYPE", strings.TrimSpace(s))}
	}
	v := Variant{Line: line}
	words := strings.Fields(lhs)
	if len(words) == 3 && words[1] == "as" {
		if !isTypeName(words[2]) {
			return v, &notationError{line, fmt.Sprintf("variant: %q after as is not an exported Go name", words[2])}
		}
		v.Method = words[2]
		words = words[:1]
	}
	if len(words) != 1 {
		return v, &notationError{line, fmt.Sprintf("variant %q: want SEL[+SEL...] [as Name] => TYPE", strings.TrimSpace(lhs))}
	}
	for _, sel := range strings.Split(words[0], "+") {
		opt := false
		if inner, ok := strings.CutPrefix(sel, "["); ok && strings.HasSuffix(inner, "]") {
			sel, opt = strings.TrimSuffix(inner, "]"), true
		}
		if !isIdent(sel) {
			return v, &notationError{line, fmt.Sprintf("variant selector %q is not a token or an argument name", sel)}
		}
		if opt {
			v.Optional = append(v.Optional, sel)
		} else {
			v.Selectors = append(v.Selectors, sel)
		}
	}
	t, err := parseType(rhs, line+strings.Count(lhs, "\n"))
	if err != nil {
		return v, err
	}
	v.Reply = t
	return v, nil
}

// The type parser: a small recursive descent over bytes.

type typeParser struct {
	s    string
	i    int
	line int
}

func parseType(s string, line int) (*Type, *notationError) {
	p := &typeParser{s: s, line: line}
	t, err := p.union()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.errorf("unexpected %q after the type", p.s[p.i:])
	}
	return t, nil
}

func (p *typeParser) errorf(format string, args ...any) *notationError {
	return &notationError{p.at(), fmt.Sprintf(format, args...)}
}

// at is the file line of the parser's position.
func (p *typeParser) at() int { return p.line + strings.Count(p.s[:min(p.i, len(p.s))], "\n") }

func (p *typeParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *typeParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *typeParser) expect(c byte) *notationError {
	if p.peek() != c {
		if p.i >= len(p.s) {
			return p.errorf("missing %q at the end", c)
		}
		return p.errorf("want %q, got %q", c, p.s[p.i:])
	}
	p.i++
	return nil
}

func (p *typeParser) union() (*Type, *notationError) {
	t, err := p.postfix()
	if err != nil {
		return nil, err
	}
	if p.peek() != '|' {
		return t, nil
	}
	u := &Type{Kind: KindUnion, Alts: []*Type{t}, Line: p.at()}
	for p.peek() == '|' {
		p.i++
		a, err := p.postfix()
		if err != nil {
			return nil, err
		}
		u.Alts = append(u.Alts, a)
	}
	return u, nil
}

func (p *typeParser) postfix() (*Type, *notationError) {
	t, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.peek() == '?' {
		p.i++
		if t.Kind == KindNull {
			return nil, p.errorf("%s? is already nullable", t.Elem)
		}
		t = &Type{Kind: KindNull, Elem: t, Line: p.at()}
	}
	return t, nil
}

func (p *typeParser) word() string {
	p.space()
	j := p.i
	for j < len(p.s) && isIdentByte(p.s[j]) {
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

func (p *typeParser) primary() (*Type, *notationError) {
	switch c := p.peek(); c {
	case 0:
		return nil, p.errorf("missing type")
	case '[':
		p.i++
		elem, err := p.union()
		if err != nil {
			return nil, err
		}
		if err := p.expect(']'); err != nil {
			return nil, err
		}
		return &Type{Kind: KindList, Elem: elem, Line: p.at()}, nil
	case '{':
		p.i++
		k, err := p.union()
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.union()
		if err != nil {
			return nil, err
		}
		if err := p.expect('}'); err != nil {
			return nil, err
		}
		switch k.Kind {
		case KindStr, KindStatus, KindInt, KindFloat, KindBool:
		default:
			return nil, p.errorf("map key %s must be str, int, float or bool", k)
		}
		return &Type{Kind: KindMap, Key: k, Elem: v, Line: p.at()}, nil
	case '<':
		p.i++
		return p.fields(KindRecord, '>')
	case '(':
		p.i++
		// "(name:" starts a tuple; anything else is a parenthesized type.
		save := p.i
		w := p.word()
		isTuple := w != "" && (p.peek() == ':' || strings.HasPrefix(p.s[p.i:], "?:")) || p.peek() == '"'
		p.i = save
		if isTuple {
			return p.fields(KindTuple, ')')
		}
		t, err := p.union()
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		return t, nil
	case '-':
		return nil, p.errorf("an exclusion is written NAME: - reason, alone on its line")
	default:
		w := p.word()
		if w == "" {
			return nil, p.errorf("unexpected %q", p.s[p.i:])
		}
		if k, ok := scalarKinds[w]; ok {
			return &Type{Kind: k, Line: p.at()}, nil
		}
		if isTypeName(w) {
			return &Type{Kind: KindNamed, Name: w, Line: p.at()}, nil
		}
		return nil, p.errorf("unknown type %q (types are ok, status, str, int, float, bool, any, or a Name declared with type)", w)
	}
}

// fields parses "name:T, ..." up to close.
func (p *typeParser) fields(kind Kind, close byte) (*Type, *notationError) {
	t := &Type{Kind: kind, Line: p.at()}
	seen := map[string]bool{}
	for {
		if p.peek() == close && len(t.Fields) > 0 {
			p.i++ // trailing comma
			return t, nil
		}
		var name string
		if p.peek() == '"' {
			j := strings.IndexByte(p.s[p.i+1:], '"')
			if j < 0 {
				return nil, p.errorf("unterminated quoted field name")
			}
			name = p.s[p.i+1 : p.i+1+j]
			p.i += j + 2
		} else {
			name = p.word()
		}
		if name == "" {
			return nil, p.errorf("want a field name, got %q", p.s[p.i:])
		}
		if seen[name] {
			return nil, p.errorf("field %s appears twice", name)
		}
		seen[name] = true
		optional := false
		if kind == KindTuple && p.peek() == '?' {
			p.i++
			optional = true
			if len(t.Fields) == 0 {
				return nil, p.errorf("field %s: the first field of a tuple is always sent", name)
			}
		} else if len(t.Fields) > 0 && t.Fields[len(t.Fields)-1].Optional {
			return nil, p.errorf("field %s: the fields after an optional one are optional too", name)
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		ft, err := p.union()
		if err != nil {
			return nil, err
		}
		if ft.Kind == KindOK {
			return nil, p.errorf("field %s: ok is only a whole reply", name)
		}
		t.Fields = append(t.Fields, Field{Name: name, Type: ft, Optional: optional})
		switch p.peek() {
		case ',':
			p.i++
		case close:
			p.i++
			return t, nil
		default:
			if p.i >= len(p.s) {
				return nil, p.errorf("missing %q at the end", close)
			}
			return nil, p.errorf("want ',' or %q, got %q", close, p.s[p.i:])
		}
	}
}
