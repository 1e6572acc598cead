package main

import (
	"go/types"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Kinds of API lines, for -count.
const (
	kindType = iota
	kindFunc
	kindMethod
	kindPromoted
	kindIfaceMethod
	kindField
	kindConst
	kindVar
	numKinds
)

var kindNames = [numKinds]string{"types", "funcs", "methods", "promoted", "iface methods", "fields", "consts", "vars"}

// line is one line of the listing.
type line struct {
	text      string
	kind      int
	generated bool // declared in a generated file, zz_*.go
}

// emitter builds the lines of one package.
type emitter struct {
	p     *pkg
	lines []line
	// names maps a package name to the import paths printed under it; a
	// name shared by two paths is printed as the full path (qualify).
	names   map[string]map[string]bool
	qualify map[string]bool
	// aliases maps a type of an unlisted package to the name of this
	// package's alias of it (respire.ConnError = transport.ConnError), the
	// name users know it by and the one printed.
	aliases map[*types.TypeName]string
}

// apiLines returns the sorted listing of package p.
func apiLines(p *pkg) []line {
	e := &emitter{p: p, names: make(map[string]map[string]bool)}
	e.run()
	for _, paths := range e.names {
		if len(paths) > 1 {
			if e.qualify == nil {
				e.qualify = make(map[string]bool)
			}
			for path := range paths {
				e.qualify[path] = true
			}
		}
	}
	if e.qualify != nil {
		e.lines = nil
		e.run()
	}
	sort.Slice(e.lines, func(i, j int) bool { return e.lines[i].text < e.lines[j].text })
	out := e.lines[:0]
	for i, l := range e.lines {
		if i == 0 || l.text != e.lines[i-1].text {
			out = append(out, l)
		}
	}
	return out
}

func (e *emitter) run() {
	scope := e.p.types.Scope()
	e.aliases = make(map[*types.TypeName]string)
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || !tn.IsAlias() {
			continue
		}
		if a, ok := tn.Type().(*types.Alias); ok && a.TypeParams().Len() > 0 {
			continue
		}
		if n, ok := types.Unalias(tn.Type()).(*types.Named); ok && n.TypeArgs().Len() == 0 && !listed(n.Obj().Pkg()) {
			if _, dup := e.aliases[n.Obj()]; !dup {
				e.aliases[n.Obj()] = name
			}
		}
	}
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			e.emitConst(obj)
		case *types.Var:
			e.add(kindVar, obj, "var "+name+" "+e.typ(obj.Type()))
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			e.add(kindFunc, obj, "func "+name+e.typeParams(sig.TypeParams())+e.sig(sig))
		case *types.TypeName:
			e.emitType(obj)
		}
	}
}

func (e *emitter) add(kind int, obj types.Object, text string) {
	gen := false
	if obj != nil && obj.Pos().IsValid() {
		gen = strings.HasPrefix(filepath.Base(e.p.fset.Position(obj.Pos()).Filename), "zz_")
	}
	e.lines = append(e.lines, line{text: "pkg " + e.p.rel + ", " + text, kind: kind, generated: gen})
}

func (e *emitter) emitConst(c *types.Const) {
	t := ""
	if b, ok := c.Type().(*types.Basic); !ok || b.Info()&types.IsUntyped == 0 {
		t = " " + e.typ(c.Type())
	}
	e.add(kindConst, c, "const "+c.Name()+t+" = "+c.Val().ExactString())
}

func (e *emitter) emitType(tn *types.TypeName) {
	name := tn.Name()
	if tn.IsAlias() {
		a, _ := tn.Type().(*types.Alias)
		tparams := ""
		if a != nil {
			tparams = e.typeParams(a.TypeParams())
		}
		target := types.Unalias(tn.Type())
		e.add(kindType, tn, "type "+name+tparams+" = "+e.aliasTarget(target))
		// An alias of a type the listing does not hold (one of an internal
		// package) carries that type's fields and methods into this
		// package's API: list them under the alias's name.
		if n, ok := target.(*types.Named); ok && !listed(n.Obj().Pkg()) {
			e.emitNamed(tn, name, n)
		}
		return
	}
	n, ok := tn.Type().(*types.Named)
	if !ok {
		return
	}
	e.emitNamed(tn, name+e.typeParams(n.TypeParams()), n)
}

// listed reports whether the types of p are listed: p is the package
// being listed or another public one.
func listed(p *types.Package) bool {
	if p == nil {
		return true
	}
	_, ok := public(p.Path(), p.Name())
	return ok
}

// emitNamed lists the type n under the name decl ("Options", "Set[T any]"),
// decl's receiver form being recv.
func (e *emitter) emitNamed(tn *types.TypeName, decl string, n *types.Named) {
	head := "type " + decl
	recv := tn.Name() + e.typeParamNames(n.TypeParams())
	switch u := n.Underlying().(type) {
	case *types.Struct:
		e.add(kindType, tn, head+" struct")
		e.emitFields(tn, head+" struct, ", u)
	case *types.Interface:
		e.emitInterface(tn, head, u)
		return // an interface's methods are its method set
	default:
		e.add(kindType, tn, head+" "+e.typ(u))
	}
	e.emitMethods(recv, n)
}

// emitFields lists the exported fields of s, with those promoted from
// embedded fields of unlisted types (unexported or internal), which users
// reach all the same.
func (e *emitter) emitFields(tn *types.TypeName, prefix string, s *types.Struct) {
	type found struct {
		f     *types.Var
		depth int
		dup   bool
	}
	byName := make(map[string]*found)
	var walk func(s *types.Struct, depth int, seen map[*types.Struct]bool)
	walk = func(s *types.Struct, depth int, seen map[*types.Struct]bool) {
		if seen[s] {
			return
		}
		seen[s] = true
		for i := 0; i < s.NumFields(); i++ {
			f := s.Field(i)
			if f.Exported() {
				if prev, ok := byName[f.Name()]; !ok || depth < prev.depth {
					byName[f.Name()] = &found{f: f, depth: depth}
				} else if depth == prev.depth {
					prev.dup = true
				}
			}
			if !f.Embedded() {
				continue
			}
			t := types.Unalias(f.Type())
			if p, ok := t.(*types.Pointer); ok {
				t = types.Unalias(p.Elem())
			}
			n, ok := t.(*types.Named)
			if !ok {
				continue
			}
			if f.Exported() && listed(n.Obj().Pkg()) {
				continue // its fields are listed under its own name
			}
			if inner, ok := n.Underlying().(*types.Struct); ok {
				walk(inner, depth+1, seen)
			}
		}
	}
	walk(s, 0, make(map[*types.Struct]bool))
	for name, fd := range byName {
		if fd.dup {
			continue // ambiguous: not reachable by that name
		}
		if fd.f.Embedded() {
			e.add(kindField, fd.f, prefix+"embedded "+e.typ(fd.f.Type()))
		} else {
			e.add(kindField, fd.f, prefix+name+" "+e.typ(fd.f.Type()))
		}
	}
}

func (e *emitter) emitInterface(tn *types.TypeName, head string, it *types.Interface) {
	var names []string
	unexported := false
	for i := 0; i < it.NumMethods(); i++ {
		m := it.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		names = append(names, m.Name())
		e.add(kindIfaceMethod, m, head+" interface, "+m.Name()+e.sig(m.Type().(*types.Signature)))
	}
	// Type terms of a constraint (~int | ~string).
	for i := 0; i < it.NumEmbeddeds(); i++ {
		et := it.EmbeddedType(i)
		if _, ok := et.Underlying().(*types.Interface); ok {
			continue // its methods are in the method set above
		}
		e.add(kindIfaceMethod, tn, head+" interface, "+e.typ(et))
	}
	sort.Strings(names)
	if unexported {
		names = append(names, "unexported methods")
	}
	summary := " interface {}"
	if len(names) > 0 {
		summary = " interface { " + strings.Join(names, ", ") + " }"
	}
	e.add(kindType, tn, head+summary)
}

// emitMethods lists the exported methods of n's method set and of *n's,
// promoted ones included, under receiver name recv.
func (e *emitter) emitMethods(recv string, n *types.Named) {
	value := types.NewMethodSet(n)
	inValue := make(map[string]bool)
	for i := 0; i < value.Len(); i++ {
		m := value.At(i).Obj()
		if m.Exported() {
			inValue[m.Name()] = true
			e.add(methodKind(m, n), m, "method ("+recv+") "+m.Name()+e.sig(m.Type().(*types.Signature)))
		}
	}
	ptr := types.NewMethodSet(types.NewPointer(n))
	for i := 0; i < ptr.Len(); i++ {
		m := ptr.At(i).Obj()
		if m.Exported() && !inValue[m.Name()] {
			e.add(methodKind(m, n), m, "method (*"+recv+") "+m.Name()+e.sig(m.Type().(*types.Signature)))
		}
	}
}

// methodKind tells a method declared on n from one promoted from a field
// n embeds.
func methodKind(m types.Object, n *types.Named) int {
	t := m.Type().(*types.Signature).Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if r, ok := types.Unalias(t).(*types.Named); ok && r.Origin().Obj() == n.Origin().Obj() {
		return kindMethod
	}
	return kindPromoted
}

// qualifier names p's types as the listing prints them: by package name,
// or by import path when two packages of the listing share a name.
func (e *emitter) qualifier(p *types.Package) string {
	if p == e.p.types || p.Path() == e.p.types.Path() {
		return ""
	}
	if e.names[p.Name()] == nil {
		e.names[p.Name()] = make(map[string]bool)
	}
	e.names[p.Name()][p.Path()] = true
	if e.qualify[p.Path()] {
		return p.Path()
	}
	return p.Name()
}

func (e *emitter) typeParams(l *types.TypeParamList) string {
	if l.Len() == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < l.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		tp := l.At(i)
		b.WriteString(tp.Obj().Name() + " " + e.typ(tp.Constraint()))
	}
	b.WriteByte(']')
	return b.String()
}

func (e *emitter) typeParamNames(l *types.TypeParamList) string {
	if l.Len() == 0 {
		return ""
	}
	names := make([]string, l.Len())
	for i := range names {
		names[i] = l.At(i).Obj().Name()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// sig prints a signature without parameter names, which are not API:
// "(context.Context, string) (string, error)".
func (e *emitter) sig(s *types.Signature) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := 0; i < s.Params().Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		t := s.Params().At(i).Type()
		if s.Variadic() && i == s.Params().Len()-1 {
			b.WriteString("...")
			t = t.(*types.Slice).Elem()
		}
		b.WriteString(e.typ(t))
	}
	b.WriteByte(')')
	switch r := s.Results(); r.Len() {
	case 0:
	case 1:
		b.WriteString(" " + e.typ(r.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := 0; i < r.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.typ(r.At(i).Type()))
		}
		b.WriteByte(')')
	}
	return b.String()
}

// typ prints t as Go source would name it, without parameter names.
func (e *emitter) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return "unsafe.Pointer"
		}
		return t.Name()
	case *types.Alias:
		return e.objName(t.Obj()) + e.typeArgs(t.TypeArgs())
	case *types.Named:
		if name, ok := e.aliases[t.Obj()]; ok {
			return name
		}
		return e.objName(t.Obj()) + e.typeArgs(t.TypeArgs())
	case *types.TypeParam:
		return t.Obj().Name()
	case *types.Pointer:
		return "*" + e.typ(t.Elem())
	case *types.Slice:
		return "[]" + e.typ(t.Elem())
	case *types.Array:
		return "[" + strconv.FormatInt(t.Len(), 10) + "]" + e.typ(t.Elem())
	case *types.Map:
		return "map[" + e.typ(t.Key()) + "]" + e.typ(t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + e.typ(t.Elem())
		case types.RecvOnly:
			return "<-chan " + e.typ(t.Elem())
		}
		if c, ok := t.Elem().(*types.Chan); ok && c.Dir() == types.RecvOnly {
			return "chan (" + e.typ(c) + ")"
		}
		return "chan " + e.typ(t.Elem())
	case *types.Signature:
		return "func" + e.sig(t)
	case *types.Struct:
		if t.NumFields() == 0 {
			return "struct{}"
		}
		parts := make([]string, t.NumFields())
		for i := range parts {
			f := t.Field(i)
			if f.Embedded() {
				parts[i] = e.typ(f.Type())
			} else {
				parts[i] = f.Name() + " " + e.typ(f.Type())
			}
		}
		return "struct{ " + strings.Join(parts, "; ") + " }"
	case *types.Interface:
		var parts []string
		for i := 0; i < t.NumEmbeddeds(); i++ {
			parts = append(parts, e.typ(t.EmbeddedType(i)))
		}
		for i := 0; i < t.NumExplicitMethods(); i++ {
			m := t.ExplicitMethod(i)
			parts = append(parts, m.Name()+e.sig(m.Type().(*types.Signature)))
		}
		if len(parts) == 0 {
			return "interface{}"
		}
		return "interface{ " + strings.Join(parts, "; ") + " }"
	case *types.Union:
		parts := make([]string, t.Len())
		for i := range parts {
			term := t.Term(i)
			parts[i] = e.typ(term.Type())
			if term.Tilde() {
				parts[i] = "~" + parts[i]
			}
		}
		return strings.Join(parts, " | ")
	case *types.Tuple:
		parts := make([]string, t.Len())
		for i := range parts {
			parts[i] = e.typ(t.At(i).Type())
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return t.String()
}

// aliasTarget prints the target of an alias by its own name, even when it
// is one of the types printed under an alias's name.
func (e *emitter) aliasTarget(t types.Type) string {
	if n, ok := t.(*types.Named); ok {
		return e.objName(n.Obj()) + e.typeArgs(n.TypeArgs())
	}
	return e.typ(t)
}

func (e *emitter) objName(o *types.TypeName) string {
	if o.Pkg() == nil {
		return o.Name() // any, error, comparable
	}
	if q := e.qualifier(o.Pkg()); q != "" {
		return q + "." + o.Name()
	}
	return o.Name()
}

func (e *emitter) typeArgs(l *types.TypeList) string {
	if l.Len() == 0 {
		return ""
	}
	parts := make([]string, l.Len())
	for i := range parts {
		parts[i] = e.typ(l.At(i))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
