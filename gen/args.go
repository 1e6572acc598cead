package gen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/respire-go/respire/gen/spec"
)

// arg is a command argument prepared for code generation: a copy of the
// spec's argument with the decisions the generator makes about it.
type arg struct {
	Name          string // spec name, used in error messages
	Type          string // spec type
	Token         string
	Optional      bool
	Multiple      bool
	MultipleToken bool
	Since         string
	Deprecated    string
	Summary       string
	Servers       []string
	Children      []*arg
	// Default is the token sent for "" by a oneof of one pure token and
	// one string (XADD's "* | id"), which the generator turns into a string.
	Default    string
	hasDefault bool
	// zeroMeans is set on an optional number whose zero is a value of its
	// own, distinct from leaving the argument out (DB 0, BLOCK 0): it says
	// what 0 means, and the Go field is a pointer so that 0 can be given.
	// Other optional numbers are plain values whose zero sends nothing.
	zeroMeans string
	// millisToken is, for a duration in seconds (scSecondsOrMillis), the
	// token of its sibling in milliseconds: a duration that is not whole
	// seconds is sent with that token instead (SET's EX 1500ms as PX 1500).
	millisToken string

	scalar scalarKind
	// countOf is set on a "num..." integer that the generated code computes
	// from the length of the next argument instead of asking for it.
	countOf *arg
	// parent is the enclosing oneof or block, nil at the top.
	parent *arg
}

// scalarKind is how a value argument is typed and encoded in Go.
type scalarKind int

const (
	scNone            scalarKind = iota
	scKey                        // string, sent with argKey (routing)
	scString                     // string
	scInt                        // int64
	scDouble                     // float64, NaN rejected
	scSeconds                    // time.Duration, seconds rounded up
	scMillis                     // time.Duration, milliseconds rounded up
	scSecondsOrMillis            // time.Duration, seconds, or with millisToken in milliseconds
	scSecondsOrTwin              // time.Duration, seconds, or in milliseconds as the twin command millisToken
	scSecondsFloat               // time.Duration, fractional seconds (blocking timeouts)
	scUnixSeconds                // time.Time
	scUnixMillis                 // time.Time
	scAny                        // any, sent as Do sends it (script arguments)
)

// Durations and times are derived from the spec, by this rule:
//
//   - an integer named "seconds" or with token EX is a time.Duration sent in
//     seconds; one named "milliseconds" or "ms", or with token PX, in
//     milliseconds; both are rounded away from zero, so that a non-zero
//     duration is never sent as 0 (see secondsOrMillis for EX beside PX);
//   - a double named "timeout" (the timeout of the blocking commands) is a
//     time.Duration sent in fractional seconds;
//   - a unix-time is a time.Time, sent in milliseconds when its name says
//     "milliseconds" or its token is PXAT, else in seconds;
//   - a stream's "min-idle-time" (XAUTOCLAIM, XCLAIM, XPENDING IDLE,
//     XREADGROUP CLAIM) is a time.Duration in whole milliseconds, whether
//     the spec types it integer or string, as XCLAIM's IDLE "ms" is.
//
// Integers whose unit the spec does not name (WAIT's "timeout", MIGRATE's
// "timeout") stay int64 unless spec/supplement.json gives their unit
// ("units"): guessing it would hide it from the reader of the signature.
func classify(a *spec.Argument) scalarKind {
	if a.Name == "min-idle-time" && (a.Type == "integer" || a.Type == "string") {
		return scMillis
	}
	switch a.Type {
	case "key":
		return scKey
	case "string", "pattern":
		return scString
	case "integer":
		switch {
		case a.Name == "seconds" || a.Token == "EX":
			return scSeconds
		case a.Name == "milliseconds" || a.Name == "ms" || a.Token == "PX":
			return scMillis
		}
		return scInt
	case "double":
		if a.Name == "timeout" {
			return scSecondsFloat
		}
		return scDouble
	case "unix-time":
		if strings.Contains(a.Name, "milliseconds") || a.Token == "PXAT" {
			return scUnixMillis
		}
		return scUnixSeconds
	case "any":
		return scAny
	}
	return scNone
}

// numeric reports the kinds of numbers: integers, doubles and durations.
func numeric(k scalarKind) bool {
	switch k {
	case scInt, scDouble, scSeconds, scMillis, scSecondsOrMillis, scSecondsOrTwin, scSecondsFloat:
		return true
	}
	return false
}

// zeroByRule reports an optional number whose zero is a value by the
// spec's own naming: a database index (DB, "destination-db") or a hash
// slot counts from 0. Zeros that mean something special (BLOCK 0 blocks
// without a limit, LPOS COUNT 0 returns every match) are not in the names;
// spec/supplement.json lists them ("zero").
func zeroByRule(a *arg) string {
	switch {
	case a.Type != "integer":
		return ""
	case a.Name == "db" || strings.HasSuffix(a.Name, "-db"):
		return "is database 0"
	case a.Name == "slot":
		return "is slot 0"
	}
	return ""
}

// buildArgs converts a command's spec arguments.
func buildArgs(cmd *spec.Command) []*arg {
	var conv func(list []spec.Argument, parent *arg) []*arg
	conv = func(list []spec.Argument, parent *arg) []*arg {
		list = dropAlternateViews(list, cmd.Servers)
		out := make([]*arg, 0, len(list))
		for i := range list {
			s := &list[i]
			a := &arg{
				Name: s.Name, Type: s.Type, Token: s.Token, Optional: s.Optional,
				Multiple: s.Multiple, MultipleToken: s.MultipleToken, Since: s.Since,
				Deprecated: s.DeprecatedSince, Summary: s.Summary, Servers: s.Servers,
				parent: parent,
			}
			a.scalar = classify(s)
			a.zeroMeans = zeroByRule(a)
			a.Children = conv(s.Arguments, a)
			liftToken(a)
			joinTokens(a)
			defaultString(a)
			out = append(out, a)
		}
		markCounts(out)
		secondsOrMillis(out)
		return out
	}
	if rawArgs(cmd) {
		return synthArgs(cmd)
	}
	out := conv(withUndocumented(cmd.Arguments, undocumentedServers(cmd), cmd.Servers), nil)
	if twin, ok := millisTwins[cmd.Name]; ok {
		for _, a := range out {
			if a.scalar == scSeconds {
				a.scalar, a.millisToken = scSecondsOrTwin, twin
			}
		}
	}
	return out
}

// millisTwins are the commands whose duration in seconds has a twin
// command that takes it in milliseconds, all else alike: a duration that
// is not whole seconds is sent as the twin (EXPIRE 2.5s as PEXPIRE 2500)
// rather than rounded up. TestMillisTwins checks the list against the
// spec both ways.
var millisTwins = map[string]string{
	"EXPIRE":  "PEXPIRE",
	"SETEX":   "PSETEX",
	"HEXPIRE": "HPEXPIRE",
}

// rawArgs reports a command whose arguments the spec does not describe:
// COMMAND DOCS gives none, yet the command takes some (a module command,
// or an arity beyond the command's name). Its method takes them as strings.
func rawArgs(cmd *spec.Command) bool {
	if len(cmd.Arguments) > 0 {
		return false
	}
	words := len(strings.Fields(cmd.Name))
	return cmd.Module != "" || -cmd.Arity > words || cmd.Arity > words
}

// synthArgs stands in for undescribed arguments: the key, when the legacy
// key positions say there is exactly one right after the name, then the
// rest as strings.
func synthArgs(cmd *spec.Command) []*arg {
	words := len(strings.Fields(cmd.Name))
	need := -cmd.Arity - words
	if cmd.Arity > 0 {
		need = cmd.Arity - words
	}
	var out []*arg
	if cmd.FirstKey == words && cmd.LastKey == words {
		out = append(out, &arg{Name: "key", Type: "key", scalar: scKey})
		need--
	}
	return append(out, &arg{Name: "args", Type: "string", scalar: scString, Multiple: true, Optional: need <= 0,
		Summary: "the spec does not describe the arguments"})
}

// secondsOrMillis finds, among the branches of a choice, a duration in
// seconds beside the same duration in milliseconds (SET, GETEX, HGETEX,
// HSETEX and MSETEX's "EX seconds | PX milliseconds"): the seconds are then
// sent as milliseconds when the duration is not whole seconds, as the
// command allows, rather than rounded up to the next second.
func secondsOrMillis(list []*arg) {
	for _, a := range list {
		if a.scalar != scSeconds || a.Token == "" || a.parent == nil || a.parent.Type != "oneof" {
			continue
		}
		for _, b := range list {
			if b.scalar == scMillis && b.Token != "" && !b.Multiple && !a.Multiple {
				a.scalar, a.millisToken = scSecondsOrMillis, b.Token
			}
		}
	}
}

// joinTokens turns a block of required pure tokens (REPLICAOF's "NO ONE")
// into one pure token of several words.
func joinTokens(a *arg) {
	if a.Type != "block" || len(a.Children) == 0 {
		return
	}
	var words []string
	if a.Token != "" {
		words = append(words, a.Token)
	}
	for _, c := range a.Children {
		if c.Type != "pure-token" || c.Optional || c.Multiple || c.Token == "" {
			return
		}
		words = append(words, c.Token)
	}
	a.Type, a.Token, a.Children = "pure-token", strings.Join(words, " "), nil
}

// defaultString turns a required oneof of a pure token and a string into
// that string, sending the token for "": XADD's id ("" sends "*"), XGROUP
// CREATE's id ("" sends "$"), MIGRATE's key ("" sends the empty string).
func defaultString(a *arg) {
	if a.Type != "oneof" || a.Optional || a.Multiple || a.Token != "" || len(a.Children) != 2 {
		return
	}
	tok, val := a.Children[0], a.Children[1]
	if tok.Type != "pure-token" {
		tok, val = val, tok
	}
	if tok.Type != "pure-token" || val.Token != "" || val.Multiple || (val.scalar != scString && val.scalar != scKey) {
		return
	}
	a.Name, a.Type, a.scalar, a.Children = val.Name, val.Type, val.scalar, nil
	a.Default, a.hasDefault = tok.Token, true
}

// liftToken gives a tokenless block the token of its required first part
// (GEOSEARCH's "BYBOX width height unit" is a block whose first part has the
// token): the words sent are the same, and the token then names the block
// rather than its first field.
func liftToken(a *arg) {
	if a.Type != "block" || a.Token != "" || len(a.Children) < 2 {
		return
	}
	f := a.Children[0]
	if f.Type == "pure-token" && !f.Optional && !f.Multiple && isWordToken(f.Token) && !allTokens(a.Children) {
		// A block that starts with its token as a part of its own
		// (XINFO STREAM's "FULL [COUNT count]", XCFGSET's
		// "IDMP-DURATION duration").
		a.Token, a.Children = f.Token, a.Children[1:]
		a.MultipleToken = a.Multiple
		oneValue(a)
		return
	}
	if f.Optional || f.Multiple || f.Type == "pure-token" || !isWordToken(f.Token) {
		return
	}
	a.Token, f.Token = f.Token, ""
	a.MultipleToken = a.Multiple
}

func allTokens(list []*arg) bool {
	for _, c := range list {
		if c.Type != "pure-token" {
			return false
		}
	}
	return true
}

// oneValue turns a block of a token and one plain value into that value
// with the token: the same words are sent, without a struct of one field.
func oneValue(a *arg) {
	if len(a.Children) != 1 {
		return
	}
	v := a.Children[0]
	if v.Optional || v.Multiple || v.Token != "" || v.scalar == scNone || v.countOf != nil {
		return
	}
	a.Type, a.scalar, a.zeroMeans, a.Children = v.Type, v.scalar, v.zeroMeans, nil
}

// markCounts finds "numkeys numkeys-many keys" pairs: an integer whose name
// starts with "num" followed by a repeated argument is the length of that
// argument, so the generated code sends len(...) itself.
func markCounts(list []*arg) {
	for i := 0; i+1 < len(list); i++ {
		a, b := list[i], list[i+1]
		if a.Type == "integer" && strings.HasPrefix(a.Name, "num") && !a.Optional && !a.Multiple && a.Token == "" &&
			b.Multiple && b.Token == "" {
			a.countOf = b
		}
	}
}

// dropAlternateViews removes arguments that describe, for some servers,
// what a sibling describes for others. Merged specs keep both shapes when
// servers disagree (BITCOUNT's range is {start, end, unit} on one server
// and {start, {end, unit}} on another): the two have disjoint server lists
// and share argument names. Both shapes send the same words, so the first
// one (the newest server's, see spec.Merge) is kept.
func dropAlternateViews(list []spec.Argument, all []string) []spec.Argument {
	var out []spec.Argument
	var also [][]string // servers of the shapes dropped in favour of out[j]
	for i := range list {
		a := &list[i]
		alternate := false
		for j := range out {
			b := &out[j]
			if len(a.Servers) > 0 && len(b.Servers) > 0 && disjoint(a.Servers, b.Servers) && sharesNames(a, b) {
				alternate = true
				also[j] = append(also[j], a.Servers...)
				break
			}
		}
		if !alternate {
			out = append(out, *a)
			also = append(also, nil)
		}
	}
	// A kept shape now stands for the servers of the shapes it replaced.
	for j := range out {
		if len(also[j]) == 0 {
			continue
		}
		widened := append(slices.Clone(out[j].Servers), also[j]...)
		slices.SortFunc(widened, spec.CompareServers)
		widened = slices.Compact(widened)
		if len(widened) >= len(all) {
			widened = nil
		}
		out[j] = widenServers(out[j], out[j].Servers, widened)
	}
	return out
}

// widenServers replaces the server list from by to in a and its parts.
func widenServers(a spec.Argument, from, to []string) spec.Argument {
	if slices.Equal(a.Servers, from) {
		a.Servers = to
	}
	if len(a.Arguments) > 0 {
		parts := make([]spec.Argument, len(a.Arguments))
		for i := range a.Arguments {
			parts[i] = widenServers(a.Arguments[i], from, to)
		}
		a.Arguments = parts
	}
	return a
}

func disjoint(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func sharesNames(a, b *spec.Argument) bool {
	na, nb := argNames(a, nil), argNames(b, nil)
	for _, x := range na {
		if slices.Contains(nb, x) {
			return true
		}
	}
	return false
}

func argNames(a *spec.Argument, out []string) []string {
	out = append(out, a.Name)
	for i := range a.Arguments {
		out = argNames(&a.Arguments[i], out)
	}
	return out
}

// clone deep-copies args.
func cloneArgs(list []*arg, parent *arg) []*arg {
	out := make([]*arg, len(list))
	m := map[*arg]*arg{}
	for i, a := range list {
		c := *a
		c.parent = parent
		c.Children = cloneArgs(a.Children, &c)
		out[i] = &c
		m[a] = &c
	}
	for _, c := range out {
		if c.countOf != nil {
			c.countOf = m[c.countOf]
		}
	}
	return out
}

// findSelector resolves a variant selector: a token (upper case), an
// argument name, or a path of names separated by '.'.
func findSelector(list []*arg, sel string) (*arg, error) {
	if strings.Contains(sel, ".") {
		cur := list
		var a *arg
		for _, name := range strings.Split(sel, ".") {
			a = nil
			for _, c := range cur {
				if c.Name == name {
					a = c
				}
			}
			if a == nil {
				return nil, fmt.Errorf("no argument %q in path %q", name, sel)
			}
			cur = a.Children
		}
		return a, nil
	}
	var found []*arg
	var walk func([]*arg)
	walk = func(l []*arg) {
		for _, a := range l {
			if a.Name == sel || a.Token != "" && a.Token == sel {
				found = append(found, a)
			}
			walk(a.Children)
		}
	}
	walk(list)
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no argument has the token or name %q", sel)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%q matches %d arguments; write the path of names, e.g. %s", sel, len(found), pathOf(found[0]))
}

func pathOf(a *arg) string {
	var parts []string
	for ; a != nil; a = a.parent {
		parts = append([]string{a.Name}, parts...)
	}
	return strings.Join(parts, ".")
}

// applyVariant shapes a copy of the arguments for one method: arguments in
// force are always sent (their enclosing optional blocks become required,
// enclosing oneofs are fixed to their branch); arguments in omit (selected
// by the command's other variants) are never sent.
func applyVariant(list []*arg, force, omit []string) ([]*arg, error) {
	list = cloneArgs(list, nil)
	for _, sel := range force {
		a, err := findSelector(list, sel)
		if err != nil {
			return nil, err
		}
		list = forceArg(list, a)
	}
	for _, sel := range omit {
		a, err := findSelector(list, sel)
		if err != nil {
			continue // already gone with what was forced or omitted before
		}
		// What this method's own selection requires stays (ZRANDMEMBER's
		// count when WITHSCORES is selected).
		if !alwaysSent(a) {
			list = remove(list, a)
		}
	}
	return list, nil
}

// alwaysSent reports an argument that every call sends.
func alwaysSent(a *arg) bool {
	for ; a != nil; a = a.parent {
		if a.Optional || a.parent != nil && a.parent.Type == "oneof" && len(a.parent.Children) > 1 {
			return false
		}
	}
	return true
}

// remove takes a out of the tree. A block that loses a required part goes
// too; a oneof left with one branch becomes that branch; a oneof left with
// none goes.
func remove(top []*arg, a *arg) []*arg {
	p := a.parent
	if p == nil {
		return slices.DeleteFunc(top, func(x *arg) bool { return x == a })
	}
	p.Children = slices.DeleteFunc(p.Children, func(x *arg) bool { return x == a })
	switch {
	case p.Type == "block" && !a.Optional:
		return remove(top, p)
	case p.Type == "oneof" && len(p.Children) == 0:
		return remove(top, p)
	case p.Type == "oneof" && len(p.Children) == 1:
		return replace(top, p, collapse(p))
	}
	return top
}

// collapse turns a oneof with a single branch into that branch.
func collapse(p *arg) *arg {
	b := p.Children[0]
	b.parent = p.parent
	b.Optional = p.Optional || b.Optional
	b.Multiple = p.Multiple || b.Multiple
	b.MultipleToken = p.MultipleToken || b.MultipleToken
	if p.Token != "" {
		// The oneof's token comes first; keep it by wrapping in a block.
		w := &arg{Name: p.Name, Type: "block", Token: p.Token, Optional: b.Optional, Multiple: b.Multiple,
			parent: p.parent, Children: []*arg{b}, Since: p.Since, Summary: p.Summary}
		b.parent, b.Optional, b.Multiple, b.MultipleToken = w, false, false, false
		return w
	}
	return b
}

// replace puts b where a was.
func replace(top []*arg, a, b *arg) []*arg {
	list := top
	if a.parent != nil {
		list = a.parent.Children
	}
	for i, x := range list {
		if x == a {
			list[i] = b
			b.parent = a.parent
		}
	}
	return top
}

// forceArg makes a always sent.
func forceArg(top []*arg, a *arg) []*arg {
	a.Optional = false
	p := a.parent
	if p == nil {
		return top
	}
	switch p.Type {
	case "block":
		return forceArg(top, p)
	case "oneof":
		// Fix the oneof to this branch.
		p.Children = []*arg{a}
		n := collapse(p)
		top = replace(top, p, n)
		return forceArg(top, n)
	}
	return top
}
