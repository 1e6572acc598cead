package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// resKind is where a method's result travels in the result struct.
type resKind int

const (
	resOK resKind = iota
	resStr
	resInt
	resFloat
	resBool
	resAny
	resDuration // time.Duration in result.Int
	resTime     // time.Time as Unix nanoseconds in result.Int
)

// replies turns reply notation into Go types, readers and decoders.
type replies struct {
	r       *Replies
	reg     *registry
	readers map[string]jen.Code // generated reader funcs by name
	order   []string
	decs    map[string]jen.Code // generated decoder vars by name
	decOrd  []string
}

func newReplies(r *Replies, reg *registry) *replies {
	return &replies{r: r, reg: reg, readers: map[string]jen.Code{}, decs: map[string]jen.Code{}}
}

// named returns the struct of a named notation type.
func (g *replies) named(name string) (*typeDecl, error) {
	if d, ok := g.reg.byName[name]; ok {
		return d, nil
	}
	td := g.r.Types[name]
	t := td.Type
	if t.Kind != KindTuple && t.Kind != KindRecord {
		return nil, nil // an alias: callers resolve it
	}
	return g.structDecl(name, t)
}

func (g *replies) structDecl(name string, t *Type) (*typeDecl, error) {
	if d, ok := g.reg.byName[name]; ok {
		if d.rt != t {
			return nil, fmt.Errorf("reply type %s is declared twice", name)
		}
		return d, nil
	}
	d := &typeDecl{kind: declReply, name: name, cand: name, rt: t, sig: "reply:" + name}
	g.reg.byName[name] = d
	g.reg.add(d)
	used := map[string]bool{}
	for _, f := range t.Fields {
		gt, err := g.goType(f.Type, name+fieldName(f.Name))
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", name, f.Name, err)
		}
		d.rfields = append(d.rfields, replyField{name: unique(used, fieldName(f.Name)), key: f.Name, t: f.Type, gt: gt})
	}
	if optionalTuple(t) {
		kinds := map[string]string{}
		for i, f := range t.Fields {
			if !f.Optional {
				continue
			}
			k := replyKind(d.rfields[i].gt)
			if k == "" {
				return nil, fmt.Errorf("%s.%s: an optional field must be a string, number, integer or aggregate", name, f.Name)
			}
			if prev := kinds[k]; prev != "" {
				return nil, fmt.Errorf("%s: optional fields %s and %s are the same kind of reply, so they cannot be told apart", name, prev, f.Name)
			}
			kinds[k] = f.Name
		}
	}
	return d, nil
}

// goType is the Go type of a reply type inside an aggregate (or at the top,
// for composite types). ctx names anonymous tuples and records.
func (g *replies) goType(t *Type, ctx string) (*gtype, error) {
	switch t.Kind {
	case KindStatus, KindStr:
		return tString, nil
	case KindInt:
		return tInt64, nil
	case KindFloat:
		return tFloat64, nil
	case KindBool:
		return tBool, nil
	case KindAny:
		return tReply, nil
	case KindOK:
		return nil, fmt.Errorf("ok is only a whole reply")
	case KindTTL:
		return tNullTTLSeconds, nil
	case KindPTTL:
		return tNullTTLMillis, nil
	case KindDeadline:
		return tNullDeadlineSecs, nil
	case KindPDeadline:
		return tNullDeadlineMilli, nil
	case KindNamed:
		d, err := g.named(t.Name)
		if err != nil {
			return nil, err
		}
		if d == nil {
			return g.goType(g.r.Types[t.Name].Type, t.Name)
		}
		return named(d), nil
	case KindTuple, KindRecord:
		d, err := g.structDecl(ctx, t)
		if err != nil {
			return nil, err
		}
		return named(d), nil
	case KindList:
		e, err := g.goType(t.Elem, ctx+"Item")
		if err != nil {
			return nil, err
		}
		return sliceOf(e), nil
	case KindMap:
		k, err := g.goType(t.Key, ctx+"Key")
		if err != nil {
			return nil, err
		}
		v, err := g.goType(t.Elem, ctx+"Value")
		if err != nil {
			return nil, err
		}
		return &gtype{kind: gMap, key: k, elem: v}, nil
	case KindNull:
		e, err := g.goType(t.Elem, ctx)
		if err != nil {
			return nil, err
		}
		switch e.kind {
		case gString, gInt64, gFloat64, gBool:
			return &gtype{kind: gNull, elem: e}, nil
		case gNamed:
			return ptrTo(e), nil
		}
		return e, nil // slices, maps and Reply keep null as nil
	case KindUnion:
		var first *gtype
		for i, a := range t.Alts {
			at, err := g.goType(a, fmt.Sprintf("%s%d", ctx, i))
			if err != nil {
				return nil, err
			}
			if first == nil {
				first = at
			} else if at.sig() != first.sig() {
				return tReply, nil
			}
		}
		return first, nil
	}
	return nil, fmt.Errorf("unknown reply type %v", t)
}

// result decides how a method returns t: its result kind, Go type and
// decoder name.
func (g *replies) result(t *Type, ctx string) (resKind, *gtype, string, error) {
	null := false
	if t.Kind == KindNull {
		null, t = true, t.Elem
	}
	for t.Kind == KindNamed {
		if d := g.r.Types[t.Name].Type; d.Kind != KindTuple && d.Kind != KindRecord {
			t = d
			if t.Kind == KindNull {
				null, t = true, t.Elem
			}
			continue
		}
		break
	}
	suffix := ""
	if null {
		suffix = "Null"
	}
	switch t.Kind {
	case KindOK:
		if null {
			// "OK or null" (SET NX): whether it was done, not Nil as an
			// error.
			return resBool, tBool, "decOKOrNull", nil
		}
		return resOK, nil, "decOK", nil
	case KindStatus, KindStr:
		return resStr, tString, "decStr" + suffix, nil
	case KindInt:
		return resInt, tInt64, "decInt" + suffix, nil
	case KindFloat:
		return resFloat, tFloat64, "decFloat" + suffix, nil
	case KindBool:
		return resBool, tBool, "decBool" + suffix, nil
	case KindAny:
		return resAny, tReply, "decReply" + suffix, nil
	case KindTTL, KindPTTL, KindDeadline, KindPDeadline:
		if null {
			return 0, nil, "", fmt.Errorf("%s? : a missing key is already Nil", t)
		}
		switch t.Kind {
		case KindTTL:
			return resDuration, tDuration, "decTTLSeconds", nil
		case KindPTTL:
			return resDuration, tDuration, "decTTLMillis", nil
		case KindDeadline:
			return resTime, tTime, "decUnixSeconds", nil
		}
		return resTime, tTime, "decUnixMillis", nil
	}
	gt, err := g.goType(t, ctx)
	if err != nil {
		return 0, nil, "", err
	}
	switch gt.kind {
	case gString:
		return resStr, gt, "decStr" + suffix, nil
	case gInt64:
		return resInt, gt, "decInt" + suffix, nil
	case gFloat64:
		return resFloat, gt, "decFloat" + suffix, nil
	case gBool:
		return resBool, gt, "decBool" + suffix, nil
	case gReply:
		return resAny, gt, "decReply" + suffix, nil
	}
	name := "dec" + gt.ident() + suffix
	if _, ok := g.decs[name]; !ok {
		rd := g.reader(gt)
		fn := "decodeWith"
		if null {
			fn = "decodeNullWith"
		}
		g.decs[name] = jen.Id(name).Op("=").Id(fn).Call(jen.Id(rd))
		g.decOrd = append(g.decOrd, name)
	}
	return resAny, gt, name, nil
}

// leaseDecoder returns the decoder of the Lease and Append forms of a
// method replying t, or "" when t is not one bulk string (str or str?;
// status replies and strings inside aggregates have no such forms).
func (g *replies) leaseDecoder(t *Type) string {
	null := false
	for {
		switch t.Kind {
		case KindNull:
			null, t = true, t.Elem
			continue
		case KindNamed:
			t = g.r.Types[t.Name].Type
			continue
		case KindStr:
			if null {
				return "decLeaseNull"
			}
			return "decLease"
		}
		return ""
	}
}

// flat reports a tuple struct whose fields are all single values, which
// RESP2 may flatten into an enclosing array.
func flat(d *typeDecl) bool {
	if d.kind != declReply || d.rt.Kind != KindTuple || optionalTuple(d.rt) {
		return false
	}
	for _, f := range d.rfields {
		switch f.gt.kind {
		case gString, gInt64, gFloat64, gBool, gNull:
		default:
			return false
		}
	}
	return true
}

// pair reports a tuple struct of a scalar and an aggregate ((stream:str,
// entries:[StreamEntry])): a list of them may come as a RESP3 map from
// the first to the second, and is read in the server's order.
func pair(d *typeDecl) bool {
	if d.kind != declReply || d.rt.Kind != KindTuple || len(d.rfields) != 2 {
		return false
	}
	switch d.rfields[0].gt.kind {
	case gString, gInt64:
	default:
		return false
	}
	switch d.rfields[1].gt.kind {
	case gSlice, gMap, gNamed, gPtr:
		return true
	}
	return false
}

var respMsg = jen.Qual(respPkg, "Msg")

// reader returns the name of the reader of gt, generating it if needed.
func (g *replies) reader(gt *gtype) string {
	if gt.rd != "" {
		return gt.rd
	}
	switch gt.kind {
	case gString:
		return "readStr"
	case gInt64:
		return "readInt"
	case gFloat64:
		return "readFloat"
	case gBool:
		return "readBool"
	case gReply:
		return "readReply"
	}
	// Generated readers are named rd..., apart from the hand-written read...
	// helpers of the package.
	name := "rd" + gt.ident()
	if _, ok := g.readers[name]; ok {
		return name
	}
	g.readers[name] = nil // reserve against recursion
	g.order = append(g.order, name)
	sig := func(body ...jen.Code) jen.Code {
		return jen.Func().Id(name).Params(jen.Id("m").Add(respMsg), jen.Id("i").Int()).
			Params(gt.code(), jen.Int(), jen.Error()).Block(body...)
	}
	var code jen.Code
	switch gt.kind {
	case gSlice:
		if gt.elem.kind == gNamed && pair(gt.elem.decl) {
			g.reader(gt.elem)
			code = sig(jen.Return(jen.Id("readPairList").Call(jen.Id("m"), jen.Id("i"), jen.Id("fields"+gt.elem.decl.name))))
		} else if gt.elem.kind == gNamed && flat(gt.elem.decl) {
			g.reader(gt.elem)
			code = sig(jen.Return(jen.Id("readTupleList").Call(jen.Id("m"), jen.Id("i"),
				jen.Lit(len(gt.elem.decl.rfields)), jen.Id("fields"+gt.elem.decl.name))))
		} else {
			code = sig(jen.Return(jen.Id("readList").Call(jen.Id("m"), jen.Id("i"), jen.Id(g.reader(gt.elem)))))
		}
	case gMap:
		code = sig(jen.Return(jen.Id("readMap").Call(jen.Id("m"), jen.Id("i"), jen.Id(g.reader(gt.key)), jen.Id(g.reader(gt.elem)))))
	case gNull:
		code = sig(jen.Return(jen.Id("readNull").Call(jen.Id("m"), jen.Id("i"), jen.Id(g.reader(gt.elem)))))
	case gPtr:
		code = sig(jen.Return(jen.Id("readPtr").Call(jen.Id("m"), jen.Id("i"), jen.Id(g.reader(gt.elem)))))
	case gNamed:
		code = g.structReader(gt.decl, sig)
	}
	g.readers[name] = code
	return name
}

// structReader generates the reader of a tuple or record struct and its
// fields function.
func (g *replies) structReader(d *typeDecl, sig func(...jen.Code) jen.Code) jen.Code {
	fields := "fields" + d.name
	if optionalTuple(d.rt) {
		return g.looseReader(d, sig)
	}
	if d.rt.Kind == KindTuple {
		var body []jen.Code
		for _, f := range d.rfields {
			body = append(body, jen.Id("v").Dot(f.name).Op("=").Add(g.fieldRead("t", f.gt)))
		}
		body = append(body, jen.Return())
		fn := jen.Func().Id(fields).Params(jen.Id("t").Op("*").Id("tuple")).Params(jen.Id("v").Id(d.name)).Block(body...)
		return jen.Add(sig(jen.Return(jen.Id("readTuple").Call(jen.Id("m"), jen.Id("i"), jen.Id(fields))))).Line().Line().Add(fn)
	}
	var cases []jen.Code
	for _, f := range d.rfields {
		cases = append(cases, jen.Case(jen.Lit(f.key)).Block(jen.Id("v").Dot(f.name).Op("=").Add(g.fieldRead("r", f.gt))))
	}
	cases = append(cases, jen.Default().Block(jen.Id("r").Dot("skip").Call()))
	fn := jen.Func().Id(fields).Params(jen.Id("r").Op("*").Id("record"), jen.Id("v").Op("*").Id(d.name)).Block(
		jen.Switch(jen.String().Parens(jen.Id("r").Dot("key").Call())).Block(cases...))
	return jen.Add(sig(jen.Return(jen.Id("readRecord").Call(jen.Id("m"), jen.Id("i"), jen.Id(fields))))).Line().Line().Add(fn)
}

// optionalTuple reports a tuple with optional fields (name?:T): the
// server sends the first field and those of the others it was asked for,
// in order (GEOSEARCH WITHDIST WITHCOORD: [member, dist, [lon, lat]]), or
// the first field alone, not in an array, when asked for none.
func optionalTuple(t *Type) bool {
	return t.Kind == KindTuple && len(t.Fields) > 1 && t.Fields[len(t.Fields)-1].Optional
}

// replyKind is how the reader tells the optional fields of a tuple apart:
// by the kind of reply each is, so that no two may share one.
func replyKind(gt *gtype) string {
	switch gt.kind {
	case gInt64:
		return "kindInt"
	case gNamed, gSlice, gMap, gPtr:
		return "kindAggregate"
	case gString, gFloat64:
		return "kindText"
	}
	return ""
}

// looseReader reads an optional tuple (see optionalTuple): the required
// fields by position, then each optional field by its reply kind.
func (g *replies) looseReader(d *typeDecl, sig func(...jen.Code) jen.Code) jen.Code {
	fields := "fields" + d.name
	var body, cases []jen.Code
	kinds := map[string]string{}
	for _, f := range d.rfields {
		opt := false
		for _, tf := range d.rt.Fields {
			if tf.Name == f.key {
				opt = tf.Optional
			}
		}
		if !opt {
			body = append(body, jen.Id("v").Dot(f.name).Op("=").Add(g.fieldRead("t", f.gt)))
			continue
		}
		k := replyKind(f.gt)
		if k == "" || kinds[k] != "" {
			continue // structDecl refused it

		}
		kinds[k] = f.name
		c := jen.Case(jen.Id(k))
		if k == "kindText" {
			c = jen.Default()
		}
		cases = append(cases, c.Block(jen.Id("v").Dot(f.name).Op("=").Add(g.fieldRead("t", f.gt))))
	}
	body = append(body, jen.For(jen.Id("t").Dot("n").Op(">").Lit(0).Op("&&").Id("t").Dot("err").Op("==").Nil()).Block(
		jen.Switch(jen.Id("t").Dot("kind").Call()).Block(cases...)), jen.Return())
	fn := jen.Func().Id(fields).Params(jen.Id("t").Op("*").Id("tuple")).Params(jen.Id("v").Id(d.name)).Block(body...)
	return jen.Add(sig(jen.Return(jen.Id("readLooseTuple").Call(jen.Id("m"), jen.Id("i"), jen.Id(fields))))).Line().Line().Add(fn)
}

// fieldRead reads one field through the tuple or record cursor cur.
func (g *replies) fieldRead(cur string, gt *gtype) jen.Code {
	switch gt.kind {
	case gString:
		return jen.Id(cur).Dot("str").Call()
	case gInt64:
		return jen.Id(cur).Dot("int").Call()
	case gFloat64:
		return jen.Id(cur).Dot("float").Call()
	case gBool:
		return jen.Id(cur).Dot("bool").Call()
	}
	fn := "field"
	if cur == "r" {
		fn = "recField"
	}
	return jen.Id(fn).Call(jen.Id(cur), jen.Id(g.reader(gt)))
}
