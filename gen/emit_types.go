package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
)

// wire describes how an argument is sent, for doc comments:
// "EX seconds", "LIMIT offset count", "WITHSCORES".
func wire(a *arg) string {
	var parts []string
	if a.Token != "" {
		parts = append(parts, a.Token)
	}
	switch a.Type {
	case "pure-token":
	case "block":
		for _, c := range a.Children {
			w := wire(c)
			if c.Optional {
				w = "[" + w + "]"
			}
			parts = append(parts, w)
		}
	case "oneof":
		var alts []string
		for _, c := range a.Children {
			alts = append(alts, wire(c))
		}
		parts = append(parts, strings.Join(alts, "|"))
	default:
		parts = append(parts, a.Name)
	}
	s := strings.Join(parts, " ")
	if a.Multiple {
		s += " ..."
	}
	return s
}

func unitNote(a *arg) string {
	switch a.scalar {
	case scSeconds:
		return ", in seconds rounded up"
	case scMillis:
		return ", in milliseconds rounded up"
	case scSecondsOrMillis:
		return ", in seconds, or as " + a.millisToken + " in milliseconds rounded up when not whole seconds"
	case scSecondsOrTwin:
		return ", in seconds, or in milliseconds rounded up (the command sent is then " + a.millisToken + ") when not whole seconds"
	case scSecondsFloat:
		return ", in seconds rounded up to the millisecond"
	case scUnixSeconds:
		return ", as a Unix time in seconds"
	case scUnixMillis:
		return ", as a Unix time in milliseconds"
	}
	return ""
}

// slotDoc documents a field.
func slotDoc(s *slot) []string {
	a := s.a
	doc := fmt.Sprintf("%s sends %s%s", s.name, wire(a), unitNote(a))
	switch s.form {
	case fPtr, fPtrStruct, fOptBool:
		doc += "; nil sends nothing"
		if a.zeroMeans != "" {
			doc += ", and 0 " + a.zeroMeans
		}
	case fZero:
		switch {
		case a.Type == "oneof" || a.scalar == scUnixSeconds || a.scalar == scUnixMillis:
			doc += "; the zero value sends nothing"
		case numeric(a.scalar):
			doc += "; 0 sends nothing"
		default:
			doc += `; "" sends nothing`
		}
	case fSlice:
		if s.optional {
			doc += "; empty sends nothing"
		}
	}
	doc += "."
	if a.Since != "" {
		doc += " Since " + a.Since + "."
	}
	if len(a.Servers) > 0 {
		doc += " Only on " + strings.Join(a.Servers, ", ") + "."
	}
	if a.Deprecated != "" {
		doc += " Deprecated since " + a.Deprecated + "."
	}
	return wrap(doc, 100)
}

func fieldDefs(slots []*slot) []jen.Code {
	var out []jen.Code
	for _, s := range slots {
		for _, l := range slotDoc(s) {
			out = append(out, jen.Comment(l))
		}
		out = append(out, jen.Id(s.name).Add(s.typ.code()))
	}
	return out
}

func (g *generator) emitTypes(f *jen.File) error {
	decls := append([]*typeDecl{}, g.reg.decls...)
	sort.SliceStable(decls, func(i, j int) bool { return decls[i].name < decls[j].name })
	fieldEx := func(s *slot) *jen.Statement { return jen.Id("v").Dot(s.name) }
	// Methods first: they decide which choices need a set method.
	methods := map[*typeDecl]jen.Code{}
	for _, d := range decls {
		switch d.kind {
		case declStruct:
			body := g.encArgs(d.a.Children, d.fields, fieldEx, false)
			methods[d] = jen.Func().Params(jen.Id("v").Id(d.name)).Id("args").Params(jen.Id("x").Op("*").Id("cmd")).Block(body...)
		case declChoice:
			var names []string
			var sets []jen.Code
			for _, ch := range d.a.Children {
				names = append(names, branchName(ch))
				sets = append(sets, g.setExpr(ch, d.fields, fieldEx, true))
			}
			body := []jen.Code{jen.Id("oneOf").Call(append([]jen.Code{x(), jen.Lit(d.a.Name), jen.Id("required"),
				jen.Lit(strings.Join(names, ", "))}, sets...)...)}
			body = append(body, g.encArgs(d.a.Children, d.fields, fieldEx, true)...)
			methods[d] = jen.Func().Params(jen.Id("v").Id(d.name)).Id("args").
				Params(jen.Id("x").Op("*").Id("cmd"), jen.Id("required").Bool()).Block(body...)
		}
	}
	for _, d := range decls {
		switch d.kind {
		case declEnum:
			var toks []string
			for _, c := range d.a.Children {
				toks = append(toks, c.Token)
			}
			f.Commentf("%s is one of the tokens %s.", d.name, strings.Join(toks, ", "))
			f.Type().Id(d.name).String()
			var defs []jen.Code
			for _, c := range d.a.Children {
				defs = append(defs, jen.Id(d.name+fieldName(c.Token)).Id(d.name).Op("=").Lit(c.Token))
			}
			f.Const().Defs(defs...)
		case declStruct:
			if d.reuses == nil {
				f.Commentf("%s is the argument %s (used by %s).", d.name, wire(d.a), strings.Join(d.users, ", "))
				f.Type().Id(d.name).Struct(fieldDefs(d.fields.params)...)
			}
			f.Add(methods[d])
			f.Line()
		case declChoice:
			f.Commentf("%s is the argument %s (used by %s): set exactly one field.", d.name, wire(d.a), strings.Join(d.users, ", "))
			f.Type().Id(d.name).Struct(fieldDefs(d.fields.params)...)
			f.Add(methods[d])
			f.Line()
			if d.needSet {
				var sets []jen.Code
				for _, ch := range d.a.Children {
					sets = append(sets, g.setExpr(ch, d.fields, fieldEx, true))
				}
				f.Func().Params(jen.Id("v").Id(d.name)).Id("set").Params().Bool().Block(jen.Return(orOp(sets)))
				f.Line()
			}
		case declOptions:
			var users []string
			for _, m := range g.methods {
				if m.opts == d {
					users = append(users, m.name)
				}
			}
			f.Commentf("%s are the optional arguments of %s. The zero value sends none of them.", d.name, strings.Join(users, " and "))
			f.Type().Id(d.name).Struct(fieldDefs(d.fields.opts)...)
		case declReply:
			f.Commentf("%s is a reply: %s.", d.name, d.rt)
			var fields []jen.Code
			for _, rf := range d.rfields {
				fl := jen.Id(rf.name).Add(rf.gt.code())
				if d.rt.Kind == KindRecord && !strings.EqualFold(rf.key, rf.name) {
					fl = fl.Comment(rf.key)
				}
				fields = append(fields, fl)
			}
			f.Type().Id(d.name).Struct(fields...)
		}
	}
	return nil
}

func (g *generator) emitReaders(f *jen.File) {
	names := append([]string{}, g.rep.decOrd...)
	sort.Strings(names)
	if len(names) > 0 {
		var defs []jen.Code
		for _, n := range names {
			defs = append(defs, g.rep.decs[n])
		}
		f.Comment("Decoders of the composite replies; the scalar ones are in decode.go.")
		f.Var().Defs(defs...)
	}
	rs := append([]string{}, g.rep.order...)
	sort.Strings(rs)
	for _, n := range rs {
		f.Add(g.rep.readers[n])
		f.Line()
	}
}
