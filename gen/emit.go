package gen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/respire-go/respire/gen/spec"
)

// flagNames maps COMMAND INFO flags to the cmdFlag constants of package
// respire; flags the client does not use are not carried.
var flagNames = map[string]string{
	"readonly": "flagReadonly", "write": "flagWrite", "blocking": "flagBlocking", "pubsub": "flagPubsub",
	"movablekeys": "flagMovableKeys", "noscript": "flagNoscript", "fast": "flagFast", "admin": "flagAdmin",
	"loading": "flagLoading", "stale": "flagStale",
}

// serverConst names the constant of a server id: "redis-7.0.15" ->
// serverRedis70.
func serverConst(id string) string {
	prod, ver, _ := strings.Cut(id, "-")
	parts := strings.SplitN(ver, ".", 3)
	v := parts[0]
	if len(parts) > 1 {
		v += parts[1]
	}
	return "server" + strings.ToUpper(prod[:1]) + prod[1:] + v
}

func (g *generator) emitInfos(f *jen.File) {
	var defs []jen.Code
	for _, c := range g.infos {
		var fields []jen.Code
		fields = append(fields, jen.Id("name").Op(":").Lit(c.Name))
		var flags []jen.Code
		for _, fl := range c.Flags {
			if n, ok := flagNames[fl]; ok {
				flags = append(flags, jen.Id(n))
			}
		}
		var reqPol, respPol string
		for _, t := range c.Tips {
			switch {
			case t == "nondeterministic_output" || t == "nondeterministic_output_order":
				if t == "nondeterministic_output" {
					flags = append(flags, jen.Id("flagNondeterministic"))
				}
			case strings.HasPrefix(t, "request_policy:"):
				reqPol = strings.TrimPrefix(t, "request_policy:")
			case strings.HasPrefix(t, "response_policy:"):
				respPol = strings.TrimPrefix(t, "response_policy:")
			}
		}
		if len(flags) > 0 {
			fields = append(fields, jen.Id("flags").Op(":").Add(orList(flags)))
		}
		if c.FirstKey != 0 || c.LastKey != 0 || c.KeyStep != 0 {
			fields = append(fields, jen.Id("firstKey").Op(":").Lit(c.FirstKey), jen.Id("lastKey").Op(":").Lit(c.LastKey),
				jen.Id("keyStep").Op(":").Lit(c.KeyStep))
		}
		if reqPol != "" {
			fields = append(fields, jen.Id("requestPolicy").Op(":").Lit(reqPol))
		}
		if respPol != "" {
			fields = append(fields, jen.Id("responsePolicy").Op(":").Lit(respPol))
		}
		var servers []jen.Code
		for _, s := range c.Servers {
			servers = append(servers, jen.Id(serverConst(s)))
		}
		if len(servers) > 0 {
			fields = append(fields, jen.Id("servers").Op(":").Add(orList(servers)))
		}
		defs = append(defs, jen.Id(infoVar(c.Name)).Op("=").Id("cmdInfo").Values(fields...))
	}
	f.Comment("The static description of every generated command, from spec/commands.json.")
	f.Var().Defs(defs...)

	// The commands Do refuses: they change the state of the connection
	// they run on, which the client shares between callers.
	f.Comment("connStateCommands maps each command that changes the state of its connection to the")
	f.Comment("reason from spec/replies.txt, which names the safe way to get the same effect.")
	f.Var().Id("connStateCommands").Op("=").Map(jen.String()).String().Values(jen.DictFunc(func(d jen.Dict) {
		for _, e := range g.excluded {
			if !e.container {
				d[jen.Lit(e.name)] = jen.Lit(e.reason)
			}
		}
	}))

	// A lookup by name, for Do: a command sent by name gets the same
	// routing (blocking pool, cache, server check) as its typed method.
	f.Comment("commandsByName finds a command's description by its upper-case name (\"GET\", \"CLIENT KILL\").")
	f.Var().Id("commandsByName").Op("=").Map(jen.String()).Op("*").Id("cmdInfo").Values(jen.DictFunc(func(d jen.Dict) {
		for _, c := range g.infos {
			d[jen.Lit(c.Name)] = jen.Op("&").Id(infoVar(c.Name))
		}
	}))
}

func orList(list []jen.Code) jen.Code {
	s := jen.Add(list[0])
	for _, c := range list[1:] {
		s = s.Op("|").Add(c)
	}
	return s
}

// exprFn gives the Go expression of a slot.
type exprFn func(s *slot) *jen.Statement

func (g *generator) emitMethod(cmds, batch *jen.File, m *method) error {
	ex := func(s *slot) *jen.Statement {
		if s.inOpts {
			return jen.Id("o").Dot(s.name)
		}
		return jen.Id(s.name)
	}
	enc := g.encArgs(m.args, m.c, ex, false)
	if m.opts != nil {
		enc = append([]jen.Code{
			jen.Var().Id("o").Id(m.opts.name),
			jen.If(jen.Id("opts").Op("!=").Nil()).Block(jen.Id("o").Op("=").Op("*").Id("opts")),
		}, enc...)
	}
	// Parameters.
	var params, batchParams, callArgs []jen.Code
	params = append(params, jen.Id("ctx").Qual("context", "Context"))
	for _, s := range m.c.params {
		p := jen.Id(s.name)
		if s.variadic {
			p = p.Op("...").Add(s.val.code())
		} else {
			p = p.Add(s.typ.code())
		}
		params = append(params, p)
		batchParams = append(batchParams, p)
		callArgs = append(callArgs, jen.Id(s.name))
	}
	if m.opts != nil {
		p := jen.Id("opts").Op("*").Id(m.opts.name)
		params = append(params, p)
		batchParams = append(batchParams, p)
		callArgs = append(callArgs, jen.Id("opts"))
	}
	var body []jen.Code
	if len(enc) > 2 {
		fn := "args" + m.name
		var fparams []jen.Code
		fparams = append(fparams, jen.Id("x").Op("*").Id("cmd"))
		for _, s := range m.c.params {
			fparams = append(fparams, jen.Id(s.name).Add(s.typ.code()))
		}
		if m.opts != nil {
			fparams = append(fparams, jen.Id("opts").Op("*").Id(m.opts.name))
		}
		cmds.Func().Id(fn).Params(fparams...).Block(enc...)
		cmds.Line()
		body = []jen.Code{jen.Id(fn).Call(append([]jen.Code{jen.Id("x")}, callArgs...)...)}
	} else {
		body = enc
	}

	var ret jen.Code
	var exec, pick string
	var futT jen.Code
	switch m.res {
	case resOK:
		ret, exec, pick, futT = jen.Error(), "execOK", "pickNone", jen.Struct()
	case resStr:
		ret, exec, pick, futT = jen.Params(jen.String(), jen.Error()), "execStr", "pickStr", jen.String()
	case resInt:
		ret, exec, pick, futT = jen.Params(jen.Int64(), jen.Error()), "execInt", "pickInt", jen.Int64()
	case resFloat:
		ret, exec, pick, futT = jen.Params(jen.Float64(), jen.Error()), "execFloat", "pickFloat", jen.Float64()
	case resBool:
		ret, exec, pick, futT = jen.Params(jen.Bool(), jen.Error()), "execBool", "pickBool", jen.Bool()
	case resDuration:
		d := jen.Qual("time", "Duration")
		ret, exec, pick, futT = jen.Params(d, jen.Error()), "execDuration", "pickDuration", jen.Qual("time", "Duration")
	case resTime:
		tm := jen.Qual("time", "Time")
		ret, exec, pick, futT = jen.Params(tm, jen.Error()), "execTime", "pickTime", jen.Qual("time", "Time")
	default:
		ret, futT = jen.Params(m.rt.code(), jen.Error()), m.rt.code()
	}
	execCall := jen.Id(exec)
	pickCall := jen.Id(pick)
	if m.res == resAny {
		execCall = jen.Id("execAny").Types(m.rt.code())
		pickCall = jen.Id("pickAny").Types(m.rt.code())
	}

	newX := func(recv string) jen.Code {
		return jen.Id("x").Op(":=").Id(recv).Dot("newCmd").Call(jen.Op("&").Id(m.info))
	}
	cbody := append([]jen.Code{newX("c")}, body...)
	cbody = append(cbody, jen.Return(execCall.Call(jen.Id("ctx"), jen.Id("c"), jen.Id("x"), jen.Id(m.dec))))
	for _, l := range g.methodDoc(m) {
		cmds.Comment(l)
	}
	cmds.Func().Params(jen.Id("c").Op("*").Id("Client")).Id(m.name).Params(params...).Add(ret).Block(cbody...)
	cmds.Line()
	if m.lease != "" {
		g.emitLease(cmds, m, params, append([]jen.Code{newX("c")}, body...))
	}
	if key := cachedKey(m); key != "" {
		var cexec jen.Code
		switch m.res {
		case resStr:
			cexec = jen.Id("cachedStr")
		case resInt:
			cexec = jen.Id("cachedInt")
		case resFloat:
			cexec = jen.Id("cachedFloat")
		case resBool:
			cexec = jen.Id("cachedBool")
		case resDuration:
			cexec = jen.Id("cachedDuration")
		case resTime:
			cexec = jen.Id("cachedTime")
		case resAny:
			cexec = jen.Id("cachedAny").Types(m.rt.code())
		}
		if cexec != nil {
			xb := append([]jen.Code{jen.Id("x").Op(":=").Id("newCmd").Call(jen.Op("&").Id(m.info))}, body...)
			xb = append(xb, jen.Return(jen.Add(cexec).Call(jen.Id("ctx"), jen.Id("v"), jen.Id("x"), jen.Id(m.dec), jen.Id(key))))
			cmds.Commentf("%s is Client.%s served from the client-side cache; see Cached.", m.name, m.name)
			cmds.Func().Params(jen.Id("v").Id("Cached")).Id(m.name).Params(params...).Add(ret).Block(xb...)
			cmds.Line()
		}
	}

	bbody := append([]jen.Code{newX("b")}, body...)
	bbody = append(bbody, jen.Return(jen.Id("queue").Call(jen.Id("b"), jen.Id("x"), jen.Id(m.dec), pickCall)))
	batch.Commentf("%s queues %s; see Client.%s.", m.name, m.cmd.Name, m.name)
	if dep := g.deprecation(m.cmd); dep != "" {
		batch.Comment("")
		batch.Comment(dep)
	}
	batch.Func().Params(jen.Id("b").Op("*").Id("Batch")).Id(m.name).Params(batchParams...).
		Op("*").Id("Future").Types(futT).Block(bbody...)
	batch.Line()
	if m.lease != "" {
		lbody := append([]jen.Code{newX("b")}, body...)
		lbody = append(lbody, jen.Return(jen.Id("queue").Call(jen.Id("b"), jen.Id("x"), jen.Id(m.lease), jen.Id("pickLease"))))
		batch.Commentf("%sLease queues %s with the reply in a pooled Lease; see Client.%sLease.", m.name, m.cmd.Name, m.name)
		batch.Comment("Release the Lease of the Future's value once done with its bytes.")
		batch.Func().Params(jen.Id("b").Op("*").Id("Batch")).Id(m.name + "Lease").Params(batchParams...).
			Op("*").Id("Future").Types(jen.Op("*").Id("Lease")).Block(lbody...)
		batch.Line()
	}
	return nil
}

// emitLease emits the allocation-free forms of a method whose reply is one
// bulk string: MLease returns the value in a pooled Lease, MAppend appends
// it to the caller's buffer (respire/lease.go). prefix builds the command.
func (g *generator) emitLease(f *jen.File, m *method, params, prefix []jen.Code) {
	prefix = prefix[:len(prefix):len(prefix)] // each method appends its own return
	null := m.lease == "decLeaseNull"
	doc := func(name, what, tail, nullCase string) {
		s := fmt.Sprintf("%s is %s for hot paths: %s. %s", name, m.name, what, tail)
		if null {
			s += " " + nullCase
		}
		for _, l := range wrap(s, 100) {
			f.Comment(l)
		}
	}
	recv := jen.Id("c").Op("*").Id("Client")
	ctx, rest := params[0], params[1:]

	doc(m.name+"Lease", "the reply comes in a pooled Lease instead of a new string, so that the call does not allocate",
		"Release the Lease once done with its bytes; see Lease.", "A null reply gives a nil Lease and Nil.")
	f.Func().Params(recv).Id(m.name+"Lease").Params(params...).Params(jen.Op("*").Id("Lease"), jen.Error()).
		Block(append(prefix, jen.Return(jen.Id("execLease").Call(jen.Id("ctx"), jen.Id("c"), jen.Id("x"), jen.Id(m.lease))))...)
	f.Line()

	dst := "dst"
	for _, s := range m.c.params {
		if s.name == dst {
			dst = "dstBuf"
		}
	}
	doc(m.name+"Append", "the reply is appended to "+dst+", which it returns, so that the call does not allocate when "+dst+" has room",
		"The bytes are copied on the calling goroutine, never after the call returned.",
		"A null reply gives "+dst+" unchanged and Nil.")
	aparams := append([]jen.Code{ctx, jen.Id(dst).Index().Byte()}, rest...)
	f.Func().Params(recv).Id(m.name+"Append").Params(aparams...).Params(jen.Index().Byte(), jen.Error()).
		Block(append(prefix, jen.Return(jen.Id("execAppend").Call(jen.Id("ctx"), jen.Id("c"), jen.Id("x"), jen.Id(dst), jen.Id(m.lease))))...)
	f.Line()
}

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

// Encoding.

var x = func() *jen.Statement { return jen.Id("x") }

// tokenCall sends a token; a token of several words (NO ONE) is sent as
// several arguments.
func tokenCall(tok string) jen.Code {
	words := strings.Fields(tok)
	if len(words) <= 1 {
		return x().Dot("arg").Call(jen.Lit(tok))
	}
	args := []jen.Code{x()}
	for _, w := range words {
		args = append(args, jen.Lit(w))
	}
	return jen.Id("argTokens").Call(args...)
}

func (g *generator) encArgs(list []*arg, c *container, ex exprFn, inOneof bool) []jen.Code {
	var out []jen.Code
	for _, a := range list {
		out = append(out, g.encArg(a, c, ex, a.Optional || inOneof)...)
	}
	return out
}

func branchName(a *arg) string {
	if isWordToken(a.Token) {
		return a.Token
	}
	return a.Name
}

func (g *generator) encArg(a *arg, c *container, ex exprFn, opt bool) []jen.Code {
	enc := g.encArgBody(a, c, ex, opt)
	if a.countOf != nil {
		return enc
	}
	var checks []jen.Code
	if n := needsCall(a, argLabel(a)); n != nil {
		switch {
		case opt:
			checks = append(checks, jen.If(g.setExpr(a, c, ex, opt)).Block(n))
		case formOf(a, opt) == fNone:
			// A token always sent, as the selector of a variant
			// (VSimWithAttribs sends WITHATTRIBS).
			checks = append(checks, n)
		}
	}
	if f := formOf(a, opt); c.slots[a] != nil && isEnum(a) && (f == fZero || f == fValue) {
		s := c.slots[a]
		// One branch of a token choice newer than the others (BITOP DIFF).
		for _, ch := range a.Children {
			if n := needsCall(ch, ch.Token); n != nil {
				checks = append(checks, jen.If(ex(s).Op("==").Lit(ch.Token)).Block(n))
			}
		}
	}
	return append(checks, enc...)
}

func (g *generator) encArgBody(a *arg, c *container, ex exprFn, opt bool) []jen.Code {
	if a.countOf != nil {
		s := c.slots[a.countOf]
		return []jen.Code{x().Dot("argInt").Call(jen.Int64().Call(jen.Len(ex(s))))}
	}
	f := formOf(a, opt)
	s := c.slots[a]
	var tok []jen.Code
	if a.Token != "" && a.Type != "pure-token" && a.scalar != scSecondsOrMillis {
		tok = []jen.Code{tokenCall(a.Token)}
	}
	switch f {
	case fNone:
		return []jen.Code{tokenCall(a.Token)}
	case fFlat:
		if a.Type == "oneof" {
			var names []string
			var sets []jen.Code
			for _, ch := range a.Children {
				names = append(names, branchName(ch))
				sets = append(sets, g.setExpr(ch, c, ex, true))
			}
			out := []jen.Code{jen.Id("oneOf").Call(append([]jen.Code{x(), jen.Lit(a.Name), jen.False(),
				jen.Lit(strings.Join(names, ", "))}, sets...)...)}
			return append(out, g.encArgs(a.Children, c, ex, true)...)
		}
		if opt && len(a.Children) > 1 && !a.Children[0].Optional {
			// A flattened optional block: its first part says whether
			// it is given, and the others need it.
			first, rest := a.Children[0], a.Children[1:]
			var sets []jen.Code
			var names []string
			for _, ch := range rest {
				sets = append(sets, g.setExpr(ch, c, ex, true))
				names = append(names, c.goNames(ch)...)
			}
			// Inside, the parts the spec requires are sent as they are.
			send := append(tok, g.encRequired(first, c, ex)...)
			for _, ch := range rest {
				if ch.Optional {
					send = append(send, g.encArg(ch, c, ex, true)...)
				} else {
					send = append(send, g.encRequired(ch, c, ex)...)
				}
			}
			verb := " needs "
			if len(names) > 1 {
				verb = " need "
			}
			return []jen.Code{jen.If(g.setExpr(first, c, ex, true)).Block(send...).Else().If(orOp(sets)).Block(
				jen.Id("argFail").Call(x(), jen.Lit(first.Name), jen.Lit(strings.Join(names, ", ")+verb+strings.Join(c.goNames(first), ", "))))}
		}
		return append(tok, g.encArgs(a.Children, c, ex, opt)...)
	case fValue:
		return append(tok, g.encValue(a, ex(s), true)...)
	case fPtr:
		return []jen.Code{jen.If(ex(s).Op("!=").Nil()).Block(append(tok, g.encValue(a, jen.Op("*").Add(ex(s)), true)...)...)}
	case fZero:
		return []jen.Code{jen.If(g.setExpr(a, c, ex, opt)).Block(append(tok, g.encValue(a, ex(s), false)...)...)}
	case fBool:
		return []jen.Code{jen.If(ex(s)).Block(tokenCall(a.Token))}
	case fOptBool:
		yes, no, _ := isBoolPair(a)
		return []jen.Code{jen.If(ex(s).Op("!=").Nil()).Block(append(tok,
			jen.Id("argBoolToken").Call(x(), jen.Op("*").Add(ex(s)), jen.Lit(yes), jen.Lit(no)))...)}
	case fSlice:
		var out []jen.Code
		if !opt {
			out = append(out, jen.Id("needOne").Call(x(), jen.Lit(a.Name), jen.Len(ex(s))))
		}
		if a.Token != "" && !a.MultipleToken {
			if opt {
				out = append(out, jen.If(jen.Len(ex(s)).Op(">").Lit(0)).Block(tokenCall(a.Token)))
			} else {
				out = append(out, tokenCall(a.Token))
			}
		}
		var each []jen.Code
		if a.Token != "" && a.MultipleToken {
			each = append(each, tokenCall(a.Token))
		}
		if a.Type == "pure-token" {
			each = []jen.Code{tokenCall(a.Token)}
		} else {
			each = append(each, g.encValue(a, jen.Id("e"), true)...)
		}
		v := "_"
		if a.Type != "pure-token" {
			v = "e"
		}
		out = append(out, jen.For(jen.List(jen.Id("_"), jen.Id(v)).Op(":=").Range().Add(ex(s))).Block(each...))
		return out
	case fPtrStruct:
		return []jen.Code{jen.If(ex(s).Op("!=").Nil()).Block(append(tok, ex(s).Dot("args").Call(x()))...)}
	}
	panic("encArg: unknown form")
}

// encRequired sends a, a part that a flattened optional block requires,
// whatever its Go field holds (a pointer is sent through).
func (g *generator) encRequired(a *arg, c *container, ex exprFn) []jen.Code {
	s := c.slots[a]
	if s == nil || s.form != fZero && s.form != fPtr {
		return g.encArg(a, c, ex, true)
	}
	var tok []jen.Code
	if a.Token != "" && a.scalar != scSecondsOrMillis {
		tok = []jen.Code{tokenCall(a.Token)}
	}
	v := ex(s)
	if s.form == fPtr {
		v = jen.Op("*").Add(ex(s))
	}
	return append(tok, g.encValue(a, v, true)...)
}

// setExpr is true when the optional argument a is given.
func (g *generator) setExpr(a *arg, c *container, ex exprFn, opt bool) jen.Code {
	f := formOf(a, opt)
	if f == fFlat {
		var parts []jen.Code
		for _, ch := range a.Children {
			parts = append(parts, g.setExpr(ch, c, ex, true))
		}
		return orOp(parts)
	}
	s := c.slots[a]
	if s == nil {
		return jen.True()
	}
	switch f {
	case fPtr, fPtrStruct, fOptBool:
		return ex(s).Op("!=").Nil()
	case fBool:
		return ex(s)
	case fSlice:
		return jen.Len(ex(s)).Op(">").Lit(0)
	case fZero:
		switch {
		case a.Type == "oneof" && isEnum(a):
			return ex(s).Op("!=").Lit("")
		case a.Type == "oneof":
			s.val.decl.needSet = true
			return ex(s).Dot("set").Call()
		case a.scalar == scUnixSeconds || a.scalar == scUnixMillis:
			return jen.Op("!").Add(ex(s)).Dot("IsZero").Call()
		case numeric(a.scalar):
			return ex(s).Op("!=").Lit(0)
		}
		return ex(s).Op("!=").Lit("")
	}
	return jen.True()
}

func orOp(parts []jen.Code) jen.Code {
	s := jen.Add(parts[0])
	for _, p := range parts[1:] {
		s = s.Op("||").Add(p)
	}
	return s
}

// encValue sends one value of a.
func (g *generator) encValue(a *arg, v jen.Code, required bool) []jen.Code {
	name := jen.Lit(a.Name)
	switch a.Type {
	case "oneof":
		if yes, no, ok := isBoolPair(a); ok {
			return []jen.Code{jen.Id("argBoolToken").Call(x(), v, jen.Lit(yes), jen.Lit(no))}
		}
		if isEnum(a) {
			if required {
				return []jen.Code{jen.Id("argEnum").Call(x(), name, jen.String().Call(v))}
			}
			return []jen.Code{x().Dot("arg").Call(jen.String().Call(v))}
		}
		return []jen.Code{jen.Add(v).Dot("args").Call(x(), jen.Lit(required))}
	case "block":
		return []jen.Code{jen.Add(v).Dot("args").Call(x())}
	case "pure-token":
		return []jen.Code{tokenCall(a.Token)}
	}
	if a.hasDefault {
		send := x().Dot("arg").Call(v)
		if a.scalar == scKey {
			send = x().Dot("argKey").Call(v)
		}
		return []jen.Code{jen.If(jen.Add(v).Op("==").Lit("")).Block(tokenCall(a.Default)).Else().Block(send)}
	}
	switch a.scalar {
	case scKey:
		return []jen.Code{x().Dot("argKey").Call(v)}
	case scString:
		return []jen.Code{x().Dot("arg").Call(v)}
	case scInt:
		return []jen.Code{x().Dot("argInt").Call(v)}
	case scDouble:
		return []jen.Code{jen.Id("argDouble").Call(x(), name, v)}
	case scSeconds:
		return []jen.Code{jen.Id("argSeconds").Call(x(), v)}
	case scMillis:
		return []jen.Code{jen.Id("argMillis").Call(x(), v)}
	case scSecondsOrMillis:
		// The token goes with the unit: encArgBody leaves it out.
		return []jen.Code{jen.Id("argSecondsOrMillis").Call(x(), v, jen.Lit(a.Token), jen.Lit(a.millisToken))}
	case scSecondsFloat:
		return []jen.Code{jen.Id("argSecondsFloat").Call(x(), name, v)}
	case scUnixSeconds:
		return []jen.Code{jen.Id("argUnixSeconds").Call(x(), name, v)}
	case scUnixMillis:
		return []jen.Code{jen.Id("argUnixMillis").Call(x(), name, v)}
	case scAny:
		return []jen.Code{x().Dot("argAny").Call(x().Dot("info").Dot("name"), name, v)}
	}
	panic("encValue: " + a.Name)
}

// cachedMethods are the hand-written methods of Cached, which have forms of
// their own (GET's allocation-free hit path, per-key entries for MGET and
// HMGET).
var cachedMethods = map[string]bool{"Get": true, "HGet": true, "HGetAll": true, "MGet": true, "HMGet": true}

// cachedKey returns the Go name of the key parameter when m gets a Cached
// form: the spec says the command is read-only, not blocking, has exactly
// one key, at position 1 (and none found by parsing its arguments), and
// its output is deterministic (no
// nondeterministic_output tip; module commands carry no tips, so they are
// left out). "" otherwise.
func cachedKey(m *method) string {
	c := m.cmd
	if cachedMethods[m.name] || c.Group == "module" || c.FirstKey != 1 || c.LastKey != 1 {
		return ""
	}
	if !slices.Contains(c.Flags, "readonly") || slices.Contains(c.Flags, "blocking") ||
		slices.Contains(c.Flags, "movablekeys") || slices.Contains(c.Tips, "nondeterministic_output") {
		return ""
	}
	for _, s := range m.c.params {
		if s.a.scalar == scKey && !s.inOpts && !s.variadic {
			return s.name
		}
	}
	return ""
}
