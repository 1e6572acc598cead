package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

const (
	respPkg = "github.com/respire-go/respire/internal/transport/resp"
)

// gkind is the kind of a Go type used in generated code.
type gkind int

const (
	gString gkind = iota
	gInt64
	gFloat64
	gBool
	gDuration
	gTime
	gReply // respire.Reply
	gNamed // a generated type (typeDecl)
	gSlice
	gPtr
	gMap
	gNull // respire.Null[T]
	gAny  // any: a value of one of the types Do takes
)

// gtype is a Go type in generated code.
type gtype struct {
	kind gkind
	decl *typeDecl
	elem *gtype // slice, ptr, map value, null
	key  *gtype // map
	// rd names the hand-written reader of a type whose values need more
	// than their Go type says (a field's TTL: seconds or milliseconds, -1
	// and -2 mean something); "" for the usual reader.
	rd string
}

var (
	tString   = &gtype{kind: gString}
	tInt64    = &gtype{kind: gInt64}
	tFloat64  = &gtype{kind: gFloat64}
	tBool     = &gtype{kind: gBool}
	tDuration = &gtype{kind: gDuration}
	tTime     = &gtype{kind: gTime}
	tReply    = &gtype{kind: gReply}
	tAny      = &gtype{kind: gAny}
)

// Elements of an aggregate that are TTLs or expiry times (HTTL,
// HEXPIRETIME): Null (not Valid) for -2, no such field; NoExpiry or the
// zero time for -1, no expiry; respire/expiry.go reads them.
var (
	tNullTTLSeconds    = &gtype{kind: gNull, elem: tDuration, rd: "readTTLSeconds"}
	tNullTTLMillis     = &gtype{kind: gNull, elem: tDuration, rd: "readTTLMillis"}
	tNullDeadlineSecs  = &gtype{kind: gNull, elem: tTime, rd: "readDeadlineSeconds"}
	tNullDeadlineMilli = &gtype{kind: gNull, elem: tTime, rd: "readDeadlineMillis"}
)

func sliceOf(t *gtype) *gtype { return &gtype{kind: gSlice, elem: t} }
func ptrTo(t *gtype) *gtype   { return &gtype{kind: gPtr, elem: t} }
func named(d *typeDecl) *gtype {
	return &gtype{kind: gNamed, decl: d}
}

// code renders t.
func (t *gtype) code() *jen.Statement {
	switch t.kind {
	case gString:
		return jen.String()
	case gInt64:
		return jen.Int64()
	case gFloat64:
		return jen.Float64()
	case gBool:
		return jen.Bool()
	case gDuration:
		return jen.Qual("time", "Duration")
	case gTime:
		return jen.Qual("time", "Time")
	case gReply:
		return jen.Id("Reply")
	case gAny:
		return jen.Any()
	case gNamed:
		return jen.Id(t.decl.name)
	case gSlice:
		return jen.Index().Add(t.elem.code())
	case gPtr:
		return jen.Op("*").Add(t.elem.code())
	case gMap:
		return jen.Map(t.key.code()).Add(t.elem.code())
	case gNull:
		return jen.Id("Null").Types(t.elem.code())
	}
	panic("gtype: unknown kind")
}

// sig is a structural signature of t: equal signatures, equal types.
func (t *gtype) sig() string {
	switch t.kind {
	case gString:
		return "string"
	case gInt64:
		return "int64"
	case gFloat64:
		return "float64"
	case gBool:
		return "bool"
	case gDuration:
		return "duration"
	case gTime:
		return "time"
	case gReply:
		return "Reply"
	case gNamed:
		return "{" + t.decl.sig + "}"
	case gSlice:
		return "[]" + t.elem.sig()
	case gPtr:
		return "*" + t.elem.sig()
	case gMap:
		return "map[" + t.key.sig() + "]" + t.elem.sig()
	case gNull:
		if t.rd != "" {
			return t.rd
		}
		return "Null[" + t.elem.sig() + "]"
	}
	return "?"
}

// ident is a name fragment for t, used to name readers and decoders
// ("ListStr", "MapStrFloat", "NullInt").
func (t *gtype) ident() string {
	switch t.kind {
	case gString:
		return "Str"
	case gInt64:
		return "Int"
	case gFloat64:
		return "Float"
	case gBool:
		return "Bool"
	case gReply:
		return "Reply"
	case gNamed:
		return t.decl.name
	case gSlice:
		return "List" + t.elem.ident()
	case gPtr:
		return "Ptr" + t.elem.ident()
	case gMap:
		return "Map" + t.key.ident() + t.elem.ident()
	case gNull:
		if t.rd != "" {
			return strings.TrimPrefix(t.rd, "read")
		}
		return "Null" + t.elem.ident()
	}
	return strings.ToUpper(t.sig())
}
