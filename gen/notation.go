package gen

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// This file parses the reply notation of spec/replies.txt; the grammar is
// documented in spec/REPLIES.md.

// Kind is the kind of a reply type.
type Kind int

// The kinds of reply types.
const (
	KindOK        Kind = iota // ok
	KindStatus                // status
	KindStr                   // str
	KindInt                   // int
	KindFloat                 // float
	KindBool                  // bool
	KindAny                   // any
	KindNull                  // T?
	KindList                  // [T]
	KindMap                   // {K:V}
	KindTuple                 // (a:T, ...)
	KindRecord                // <a:T, ...>
	KindUnion                 // A | B
	KindNamed                 // Name
	KindTTL                   // ttl: seconds to live, -1 none, -2 no key
	KindPTTL                  // pttl: the same in milliseconds
	KindDeadline              // deadline: Unix seconds of expiry, -1 none, -2 no key
	KindPDeadline             // pdeadline: the same in milliseconds
)

var scalarKinds = map[string]Kind{
	"ok": KindOK, "status": KindStatus, "str": KindStr, "int": KindInt,
	"float": KindFloat, "bool": KindBool, "any": KindAny,
	"ttl": KindTTL, "pttl": KindPTTL, "deadline": KindDeadline, "pdeadline": KindPDeadline,
}

// Type is a parsed reply type.
type Type struct {
	Kind   Kind
	Elem   *Type   // KindNull, KindList; the value of KindMap
	Key    *Type   // KindMap
	Fields []Field // KindTuple, KindRecord
	Alts   []*Type // KindUnion
	Name   string  // KindNamed
	Line   int
}

// Field is a field of a tuple or record.
type Field struct {
	Name string
	Type *Type
	// Optional marks a tuple field written name?:T, which the server sends
	// only when asked (GEOSEARCH's WITHDIST): see optionalTuple.
	Optional bool
}

// String returns the type in canonical notation.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	switch t.Kind {
	case KindOK, KindStatus, KindStr, KindInt, KindFloat, KindBool, KindAny, KindTTL, KindPTTL, KindDeadline, KindPDeadline:
		for k, v := range scalarKinds {
			if v == t.Kind {
				b.WriteString(k)
			}
		}
	case KindNull:
		if t.Elem.Kind == KindUnion {
			b.WriteByte('(')
			t.Elem.write(b)
			b.WriteByte(')')
		} else {
			t.Elem.write(b)
		}
		b.WriteByte('?')
	case KindList:
		b.WriteByte('[')
		t.Elem.write(b)
		b.WriteByte(']')
	case KindMap:
		b.WriteByte('{')
		t.Key.write(b)
		b.WriteByte(':')
		t.Elem.write(b)
		b.WriteByte('}')
	case KindTuple, KindRecord:
		open, close := "(", ")"
		if t.Kind == KindRecord {
			open, close = "<", ">"
		}
		b.WriteString(open)
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			if isIdent(f.Name) {
				b.WriteString(f.Name)
			} else {
				// As the parser reads it: no escapes, a name has no '"'.
				b.WriteString(`"` + f.Name + `"`)
			}
			if f.Optional {
				b.WriteByte('?')
			}
			b.WriteByte(':')
			f.Type.write(b)
		}
		b.WriteString(close)
	case KindUnion:
		for i, a := range t.Alts {
			if i > 0 {
				b.WriteString(" | ")
			}
			a.write(b)
		}
	case KindNamed:
		b.WriteString(t.Name)
	}
}

// Entry is the reply of one command.
type Entry struct {
	Command  string
	Line     int
	Reply    *Type  // nil when excluded
	Excluded string // the reason, for "NAME: - reason"
	// Setup marks an exclusion written "NAME: - [setup] reason": the
	// command sets an attribute of its connection that every connection
	// of a client may carry alike (its name, eviction), so that
	// Options.OnConnect may send it while a connection is set up.
	Setup    bool
	Variants []Variant // "; SEL => TYPE" parts
}

// Variant is a reply shape selected by arguments.
type Variant struct {
	Selectors []string // tokens or argument names (paths with '.')
	// Optional are selectors written [SEL]: options of this method that
	// the others (the base method too) do not have.
	Optional []string
	Method   string // "as Name", or ""
	Reply    *Type
	Line     int
}

// all returns the variant's selectors, required and optional.
func (v *Variant) all() []string { return append(slices.Clone(v.Selectors), v.Optional...) }

// TypeDef is a "type Name = TYPE" line.
type TypeDef struct {
	Name string
	Type *Type
	Line int
}

// Replies is a parsed replies file.
type Replies struct {
	File    string
	Entries map[string]*Entry
	Types   map[string]*TypeDef
}

// LoadReplies reads and parses a replies file.
func LoadReplies(path string) (*Replies, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseReplies(path, string(data))
}

// ParseError is a notation error at a line of the file.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseReplies parses the text of a replies file; file names it in errors.
// All errors are reported, one per line, joined.
func ParseReplies(file, text string) (*Replies, error) {
	r := &Replies{File: file, Entries: map[string]*Entry{}, Types: map[string]*TypeDef{}}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &ParseError{file, line, fmt.Sprintf(format, args...)})
	}
	for _, st := range statements(text) {
		if name, rest, ok := typeDefHead(st.text); ok {
			t, err := parseType(rest, st.line+strings.Count(st.text[:len(st.text)-len(rest)], "\n"))
			if err != nil {
				fail(err.line, "type %s: %s", name, err.msg)
				continue
			}
			if prev, dup := r.Types[name]; dup {
				fail(st.line, "type %s is already declared at line %d", name, prev.Line)
				continue
			}
			r.Types[name] = &TypeDef{Name: name, Type: t, Line: st.line}
			continue
		}
		e, perr := parseEntry(st.text, st.line)
		if perr != nil {
			fail(perr.line, "%s", perr.msg)
			continue
		}
		if prev, dup := r.Entries[e.Command]; dup {
			fail(st.line, "%s has a second entry (the first is at line %d)", e.Command, prev.Line)
			continue
		}
		r.Entries[e.Command] = e
	}
	errs = append(errs, r.check()...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// check resolves named types and rejects recursion.
func (r *Replies) check() []error {
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &ParseError{r.File, line, fmt.Sprintf(format, args...)})
	}
	var walk func(t *Type, stack []string)
	walk = func(t *Type, stack []string) {
		switch t.Kind {
		case KindNamed:
			d, ok := r.Types[t.Name]
			if !ok {
				fail(t.Line, "unknown type %s", t.Name)
				return
			}
			for _, s := range stack {
				if s == t.Name {
					fail(t.Line, "type %s refers to itself", t.Name)
					return
				}
			}
			walk(d.Type, append(stack, t.Name))
		case KindNull, KindList:
			walk(t.Elem, stack)
		case KindMap:
			walk(t.Key, stack)
			walk(t.Elem, stack)
		case KindTuple, KindRecord:
			for _, f := range t.Fields {
				walk(f.Type, stack)
			}
		case KindUnion:
			for _, a := range t.Alts {
				walk(a, stack)
			}
		}
	}
	for _, name := range sortedKeys(r.Types) {
		walk(r.Types[name].Type, []string{name})
	}
	for _, name := range sortedKeys(r.Entries) {
		e := r.Entries[name]
		if e.Reply != nil {
			walk(e.Reply, nil)
		}
		for _, v := range e.Variants {
			walk(v.Reply, nil)
		}
	}
	if len(errs) > 1 {
		// Report each problem once even when a type is used several times.
		seen := map[string]bool{}
		out := errs[:0]
		for _, e := range errs {
			if s := e.Error(); !seen[s] {
				seen[s] = true
				out = append(out, e)
			}
		}
		errs = out
	}
	return errs
}

// Resolve follows named types.
func (r *Replies) Resolve(t *Type) *Type {
	for t.Kind == KindNamed {
		t = r.Types[t.Name].Type
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
