package gen

import (
	"fmt"
	"strconv"
	"strings"
)

// How arguments become Go parameters and fields.
//
//   - A required argument is a parameter (at the top) or a plain field (in a
//     generated struct): key, string and pattern are string; integer int64;
//     double float64; durations and unix times see classify.
//   - A required pure token has no Go value: it is always sent.
//   - A required block is flattened: its parts take its place. So is an
//     optional block without a token inside another block or a choice
//     (BITCOUNT's "end [BYTE|BIT]"): its parts are optional fields, and
//     when its first part is required in the spec the others need it. A
//     required oneof without a token inside a block or a choice is
//     flattened too, one field per branch (see nestedChoice); the spec's
//     grouping names (end-unit-block, write-operation) never show.
//   - A repeated argument is a slice; at the top, the last one becomes
//     variadic when the method has no options struct.
//   - An optional argument is a field of the method's Options struct (or of
//     the enclosing struct), whose zero value means "not given": a pure
//     token is a bool; a string, key or unix time is sent when not ""/zero;
//     an integer, double or duration is a plain value sent when not 0 (EX,
//     COUNT, LIMIT: 0 would be refused or mean the default), except where 0
//     is a value of its own (arg.zeroMeans: DB 0, BLOCK 0), where it is a
//     pointer, nil = not given; a block is a pointer to its struct.
//   - A oneof of pure tokens is a string enum type with a constant per
//     token; YES/NO and ON/OFF are a bool (*bool when optional); any other
//     oneof is a choice struct with a field per branch, of which exactly one
//     (required) or at most one (optional) may be set. An optional oneof
//     of pure tokens is its enum type too, "" = not given, so that a
//     choice has one type wherever it appears (GEODIST's and GEOSEARCH's
//     Unit); any other optional oneof without a token of its own is
//     flattened into the enclosing struct, one field per branch, at most
//     one set.
//   - An integer named num... right before a repeated argument is its
//     length and is computed (numkeys, numfields).
//
// Optional tokenless repeated arguments at the top (EVAL's keys and args)
// are parameters too: nothing is lost by passing none.

// form is how an argument appears in its container.
type form int

const (
	fNone      form = iota // always-sent pure token: no Go value
	fValue                 // T
	fPtr                   // *T, nil = not given
	fZero                  // T, zero = not given (string, time, enum, choice)
	fBool                  // optional pure token
	fOptBool               // *bool for an optional YES/NO or ON/OFF
	fSlice                 // []T
	fFlat                  // a required block or tokenless optional oneof: parts inline
	fPtrStruct             // *S for an optional block
)

// slot is an argument with a Go name and type in a container.
type slot struct {
	a        *arg
	form     form
	name     string
	typ      *gtype // the slot's full type ([]T, *T, T)
	val      *gtype // the type of one value (T)
	inOpts   bool
	variadic bool
	optional bool // inside a flattened optional oneof, every branch is optional
}

// container collects the slots of a parameter list (with its Options
// struct) or of a generated struct.
type container struct {
	top    bool
	params []*slot // top: parameters; otherwise the struct's fields
	opts   []*slot // top only: fields of the Options struct
	slots  map[*arg]*slot
	used   map[string]bool // Go names taken (params and fields share one space at the top)
	usedF  map[string]bool
	owner  string // method name, for qualified type names
	cmd    string // command name, for overrides
	path   []string
	reg    *registry
}

func newContainer(reg *registry, owner, cmd string, top bool, path []string) *container {
	return &container{top: top, slots: map[*arg]*slot{}, used: map[string]bool{}, usedF: map[string]bool{},
		owner: owner, cmd: cmd, path: path, reg: reg}
}

// paramOverrides renames parameters whose spec names read badly in Go,
// keyed by "COMMAND/argument".
var paramOverrides = map[string]string{
	"CLIENT KILL/new-format": "filters",
}

// isBoolPair reports a oneof of exactly YES/NO or ON/OFF.
func isBoolPair(a *arg) (yes, no string, ok bool) {
	if a.Type != "oneof" || len(a.Children) != 2 {
		return "", "", false
	}
	t0, t1 := a.Children[0], a.Children[1]
	if t0.Type != "pure-token" || t1.Type != "pure-token" {
		return "", "", false
	}
	switch t0.Token + "/" + t1.Token {
	case "YES/NO", "ON/OFF":
		return t0.Token, t1.Token, true
	case "NO/YES", "OFF/ON":
		return t1.Token, t0.Token, true
	}
	return "", "", false
}

func isEnum(a *arg) bool {
	if a.Type != "oneof" || len(a.Children) == 0 {
		return false
	}
	for _, c := range a.Children {
		if c.Type != "pure-token" || c.Multiple || !isWordToken(c.Token) {
			return false
		}
	}
	return true
}

// isWordToken reports a token that can name a Go identifier.
func isWordToken(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// formOf decides how a appears; opt says a is optional in its context.
func formOf(a *arg, opt bool) form {
	switch {
	case a.Multiple:
		return fSlice
	case !opt:
		switch a.Type {
		case "pure-token":
			return fNone
		case "block":
			return fFlat
		case "oneof":
			if nestedChoice(a) {
				return fFlat
			}
		}
		return fValue
	}
	switch a.Type {
	case "pure-token":
		return fBool
	case "block":
		if a.Token == "" && a.parent != nil {
			return fFlat
		}
		return fPtrStruct
	case "oneof":
		if _, _, ok := isBoolPair(a); ok {
			return fOptBool
		}
		if a.Token == "" && !isEnum(a) {
			return fFlat
		}
		return fZero
	}
	if numeric(a.scalar) && a.zeroMeans != "" {
		return fPtr
	}
	return fZero
}

// nestedChoice reports a required oneof without a token inside a block
// or a choice, other than a choice of tokens: its branches become fields
// of the enclosing struct (BITFIELD's SET and INCRBY next to GET), so
// that no struct of the spec's grouping shows in the API.
func nestedChoice(a *arg) bool {
	if a.Type != "oneof" || a.Token != "" || a.parent == nil || isEnum(a) {
		return false
	}
	_, _, pair := isBoolPair(a)
	return !pair
}

// goName is the Go name of a field: its token when it is a word (EX,
// WITHSCORES, LIMIT), else its argument name.
func goFieldName(a *arg) string {
	if isWordToken(a.Token) {
		return tokenName(a.Token)
	}
	return fieldName(strings.TrimSuffix(a.Name, "-block"))
}

// place adds a to c.
func (c *container) place(a *arg, opt bool) error {
	if a.countOf != nil {
		return nil
	}
	f := formOf(a, opt)
	switch f {
	case fNone:
		return nil
	case fFlat:
		for _, ch := range a.Children {
			// Parts of a flattened oneof, or of a flattened optional
			// block, are each optional.
			if err := c.place(ch, ch.Optional || a.Type == "oneof" || opt); err != nil {
				return err
			}
		}
		return nil
	}
	val, err := c.valueType(a)
	if err != nil {
		return err
	}
	s := &slot{a: a, form: f, val: val, optional: opt}
	switch f {
	case fSlice:
		s.typ = sliceOf(val)
	case fPtr, fPtrStruct, fOptBool:
		s.typ = ptrTo(val)
	case fBool:
		s.typ = tBool
	default:
		s.typ = val
	}
	toParams := !c.top || !opt || (a.Multiple && a.Token == "")
	if c.top && toParams {
		base := paramName(a.Name)
		if a.Multiple {
			base = paramName(plural(a.Name))
		}
		if o, ok := paramOverrides[c.cmd+"/"+a.Name]; ok {
			base = o
		}
		s.name = unique(c.used, base)
		c.params = append(c.params, s)
	} else {
		name := goFieldName(a)
		if name == "Options" && val.kind == gNamed && val.decl.cand != "" {
			// A field called Options would read as a nested options
			// struct: CLUSTER FAILOVER's FORCE|TAKEOVER is a FailoverMode.
			name = val.decl.cand
		}
		s.name = unique(c.usedF, name)
		s.inOpts = c.top
		if c.top {
			c.opts = append(c.opts, s)
		} else {
			c.params = append(c.params, s)
		}
	}
	c.slots[a] = s
	return nil
}

func unique(used map[string]bool, name string) string {
	n := name
	for i := 2; used[n]; i++ {
		n = name + strconv.Itoa(i)
	}
	used[n] = true
	return n
}

// valueType is the Go type of one value of a.
func (c *container) valueType(a *arg) (*gtype, error) {
	switch a.Type {
	case "pure-token":
		return tBool, nil
	case "oneof":
		if _, _, ok := isBoolPair(a); ok {
			return tBool, nil
		}
		if isEnum(a) {
			return named(c.reg.enum(a, c.owner, c.cmd)), nil
		}
		d, err := c.reg.structOf(a, c.owner, c.cmd, c.path, true)
		if err != nil {
			return nil, err
		}
		return named(d), nil
	case "block":
		d, err := c.reg.structOf(a, c.owner, c.cmd, c.path, false)
		if err != nil {
			return nil, err
		}
		return named(d), nil
	}
	switch a.scalar {
	case scKey, scString:
		return tString, nil
	case scInt:
		return tInt64, nil
	case scDouble:
		return tFloat64, nil
	case scSeconds, scMillis, scSecondsOrMillis, scSecondsOrTwin, scSecondsFloat:
		return tDuration, nil
	case scUnixSeconds, scUnixMillis:
		return tTime, nil
	case scAny:
		return tAny, nil
	}
	return nil, fmt.Errorf("argument %s: unsupported type %q", a.Name, a.Type)
}

// layout places a method's or a struct's arguments.
func layout(reg *registry, owner, cmd string, args []*arg, top bool, path []string) (*container, error) {
	c := newContainer(reg, owner, cmd, top, path)
	for _, a := range args {
		if err := c.place(a, a.Optional); err != nil {
			return nil, err
		}
	}
	if c.top && len(c.opts) == 0 {
		// The last repeated parameter becomes variadic.
		for i := len(c.params) - 1; i >= 0; i-- {
			if c.params[i].form == fSlice {
				s := c.params[i]
				s.variadic = true
				c.params = append(append(c.params[:i:i], c.params[i+1:]...), s)
				break
			}
		}
	}
	return c, nil
}

// goNames are the Go names of the fields that a takes in c.
func (c *container) goNames(a *arg) []string {
	if s := c.slots[a]; s != nil {
		return []string{s.name}
	}
	var out []string
	for _, ch := range a.Children {
		out = append(out, c.goNames(ch)...)
	}
	return out
}
