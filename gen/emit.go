package gen

import (
	"fmt"
	"github.com/respire-go/respire/gen/spec"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"
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

	f.Comment("connSetupCommands are the commands of connStateCommands that Options.OnConnect may send:")
	f.Comment("they set an attribute every connection of a client may carry alike (\"NAME: - [setup] reason\").")
	f.Var().Id("connSetupCommands").Op("=").Map(jen.String()).Bool().Values(jen.DictFunc(func(d jen.Dict) {
		for _, e := range g.excluded {
			if e.setup && !e.container {
				d[jen.Lit(e.name)] = jen.True()
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
	// passArgs hand the parameters on to a method of the same
	// signature (Tx's methods to Batch's).
	var params, batchParams, callArgs, passArgs []jen.Code
	params = append(params, jen.Id("ctx").Qual("context", "Context"))
	for _, s := range m.c.params {
		p := jen.Id(s.name)
		pass := jen.Id(s.name)
		if s.variadic {
			p = p.Op("...").Add(s.val.code())
			pass = pass.Op("...")
		} else {
			p = p.Add(s.typ.code())
		}
		params = append(params, p)
		batchParams = append(batchParams, p)
		callArgs = append(callArgs, jen.Id(s.name))
		passArgs = append(passArgs, pass)
	}
	if m.opts != nil {
		p := jen.Id("opts").Op("*").Id(m.opts.name)
		params = append(params, p)
		batchParams = append(batchParams, p)
		callArgs = append(callArgs, jen.Id("opts"))
		passArgs = append(passArgs, jen.Id("opts"))
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
	inTx := txAllowed(m.cmd)
	if inTx {
		// The transaction's batch queues it.
		tbody := []jen.Code{jen.Return(jen.Id("t").Dot("b").Dot(m.name).Call(passArgs...))}
		batch.Commentf("%s queues %s in the transaction; see Client.%s.", m.name, m.cmd.Name, m.name)
		if dep := g.deprecation(m.cmd); dep != "" {
			batch.Comment("")
			batch.Comment(dep)
		}
		batch.Func().Params(jen.Id("t").Op("*").Id("Tx")).Id(m.name).Params(batchParams...).
			Op("*").Id("Future").Types(futT).Block(tbody...)
		batch.Line()
	}
	if m.lease != "" {
		lbody := append([]jen.Code{newX("b")}, body...)
		lbody = append(lbody, jen.Return(jen.Id("queue").Call(jen.Id("b"), jen.Id("x"), jen.Id(m.lease), jen.Id("pickLease"))))
		batch.Commentf("%sLease queues %s with the reply in a pooled Lease; see Client.%sLease.", m.name, m.cmd.Name, m.name)
		batch.Comment("Release the Lease of the Future's value once done with its bytes.")
		batch.Func().Params(jen.Id("b").Op("*").Id("Batch")).Id(m.name + "Lease").Params(batchParams...).
			Op("*").Id("Future").Types(jen.Op("*").Id("Lease")).Block(lbody...)
		batch.Line()
		if inTx {
			tbody := []jen.Code{jen.Return(jen.Id("t").Dot("b").Dot(m.name + "Lease").Call(passArgs...))}
			batch.Commentf("%sLease queues %s in the transaction with the reply in a pooled Lease; see Client.%sLease.", m.name, m.cmd.Name, m.name)
			batch.Comment("Release the Lease of the Future's value once done with its bytes.")
			batch.Func().Params(jen.Id("t").Op("*").Id("Tx")).Id(m.name + "Lease").Params(batchParams...).
				Op("*").Id("Future").Types(jen.Op("*").Id("Lease")).Block(tbody...)
			batch.Line()
		}
	}
	return nil
}

// txAllowed reports whether a command gets a method on Tx: what makes
// sense inside MULTI. Not a blocking command (inside a transaction it
// does not block: BLPOP answers nil at once), not one the server refuses
// there (no_multi) or that belongs to a connection's state (pubsub), and
// no admin command (CONFIG, SHUTDOWN, ...). Do still sends any command.
func txAllowed(c *spec.Command) bool {
	for _, f := range c.Flags {
		switch f {
		case "blocking", "no_multi", "pubsub", "admin":
			return false
		}
	}
	return true
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
