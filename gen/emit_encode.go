package gen

// Encoding: the statements that send a method's arguments.

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

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
	case scSecondsOrTwin:
		return []jen.Code{jen.Id("argSecondsOrTwin").Call(x(), v, jen.Op("&").Id(infoVar(a.millisToken)))}
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
