package gen

import (
	"fmt"
	"sort"
	"strings"
)

// declKind is the kind of a generated named type.
type declKind int

const (
	declEnum    declKind = iota // string type with a constant per token
	declStruct                  // a block's fields
	declChoice                  // a oneof's branches, one to be set
	declOptions                 // a method's optional arguments
	declReply                   // a tuple or record of the reply notation
)

// typeDecl is a generated named type.
type typeDecl struct {
	kind declKind
	name string // final Go name
	cand string // short name wanted
	qual string // qualified name used when cand is ambiguous
	sig  string
	seq  int // creation order, for determinism

	a      *arg       // enum, struct, choice: the first argument that produced it
	fields *container // struct, choice, options
	users  []string   // methods using it

	// declReply
	rt      *Type
	rfields []replyField
	needSet bool      // choice: emit a set method
	reuses  *typeDecl // an argument struct that is this reply struct
}

type replyField struct {
	name string // Go field name
	key  string // server's name (records) or notation name (tuples)
	t    *Type
	gt   *gtype
}

// registry holds every generated type, deduplicated by structure.
type registry struct {
	decls  []*typeDecl
	bySig  map[string]*typeDecl
	byName map[string]*typeDecl // reply types, by notation name
}

func newRegistry() *registry {
	return &registry{bySig: map[string]*typeDecl{}, byName: map[string]*typeDecl{}}
}

func (r *registry) add(d *typeDecl) *typeDecl {
	if old, ok := r.bySig[d.sig]; ok && d.kind != declOptions && d.kind != declReply {
		old.users = appendUnique(old.users, d.users...)
		return old
	}
	d.seq = len(r.decls)
	r.decls = append(r.decls, d)
	if d.kind != declOptions && d.kind != declReply {
		r.bySig[d.sig] = d
	}
	return d
}

func appendUnique(list []string, add ...string) []string {
	for _, s := range add {
		found := false
		for _, x := range list {
			if x == s {
				found = true
			}
		}
		if !found {
			list = append(list, s)
		}
	}
	return list
}

// argSig is the structural signature of an argument tree.
func argSig(a *arg) string {
	var b strings.Builder
	var w func(a *arg)
	w = func(a *arg) {
		fmt.Fprintf(&b, "%s/%s/%s/%t%t%t/%d(", a.Name, a.Type, a.Token, a.Optional, a.Multiple, a.MultipleToken, a.scalar)
		for _, c := range a.Children {
			w(c)
		}
		b.WriteString(")")
	}
	w(a)
	return b.String()
}

// nameOverrides names argument types whose spec names are too generic or
// misleading, keyed by "COMMAND/argument" or by argument name.
var nameOverrides = map[string]string{
	"new-format":                  "ClientKillFilter",
	"circle":                      "GeoCircle",
	"box":                         "GeoBox",
	"orderby":                     "SlotStatsOrderBy",
	"slotsrange":                  "SlotsRange",
	"CLUSTER ADDSLOTSRANGE/range": "SlotsRange",
	"CLUSTER DELSLOTSRANGE/range": "SlotsRange",
	"BITCOUNT/range":              "BitRange",
	"BITPOS/range":                "BitRange",
	"target":                      "FailoverTarget",
	"auth2":                       "MigrateAuth",
	"trim":                        "Trim",
	"count-block":                 "GeoCount",
	"ZADD/data":                   "ScoredMember",
	"GEOADD/data":                 "GeoMember",
	"CONFIG SET/data":             "ConfigParam",
	"get-block":                   "BitFieldGet",
	"set-block":                   "BitFieldSet",
	"incrby-block":                "BitFieldIncrBy",
	"overflow-block":              "BitFieldOverflow",
	"BITFIELD/operation":          "BitFieldOp",
	"wherefrom":                   "Side",
	"whereto":                     "Side",
	"fromlonlat":                  "LonLat",
	"idmp-with-pid-iid":           "IdempotentID",
	"range":                       "",
}

// enumOverrides names enum types by their token set.
var enumOverrides = map[string]string{
	"LEFT|RIGHT":           "Side",
	"BEFORE|AFTER":         "Position",
	"MIN|MAX":              "ScoreEnd",
	"ASC|DESC":             "Order",
	"ASYNC|SYNC":           "FlushMode",
	"M|KM|FT|MI":           "Unit",
	"BYTE|BIT":             "BitUnit",
	"MAXLEN|MINID":         "TrimStrategy",
	"NX|XX":                "Existence",
	"FNX|FXX":              "FieldExistence",
	"NX|XX|GT|LT":          "ExpireCondition",
	"FORCE|TAKEOVER":       "FailoverMode",
	"KEEPREF|DELREF|ACKED": "RefPolicy",
}

// genericNames are argument names that say nothing about the type.
var genericNames = map[string]bool{
	"data": true, "options": true, "args": true, "arguments": true, "filter": true, "filters": true,
	"operation": true, "range": true, "subcommand": true, "mode": true, "type": true, "attr": true,
	"action": true, "policy": true, "condition": true, "selector": true, "status": true, "enabled": true,
	"where": true, "by": true, "from": true, "strategy": true, "operator": true,
}

func (r *registry) candidate(a *arg, owner, cmd string) (cand, qual string) {
	if o, ok := nameOverrides[cmd+"/"+a.Name]; ok && o != "" {
		return o, owner + o
	}
	if o, ok := nameOverrides[a.Name]; ok && o != "" {
		return o, owner + o
	}
	base := fieldName(strings.TrimSuffix(a.Name, "-block"))
	if genericNames[a.Name] {
		if a.Type == "block" && len(a.Children) <= 3 {
			var b strings.Builder
			for _, c := range a.Children {
				b.WriteString(fieldName(c.Name))
			}
			return b.String(), owner + base
		}
		return "", owner + base
	}
	return base, owner + base
}

// enum registers the enum type of a oneof of pure tokens.
func (r *registry) enum(a *arg, owner, cmd string) *typeDecl {
	var toks []string
	for _, c := range a.Children {
		toks = append(toks, c.Token)
	}
	key := strings.Join(toks, "|")
	cand, qual := r.candidate(a, owner, cmd)
	if o, ok := enumOverrides[key]; ok {
		cand, qual = o, owner+o
	}
	return r.add(&typeDecl{kind: declEnum, cand: cand, qual: qual, sig: "enum:" + key, a: a, users: []string{owner}})
}

// structOf registers the struct of a block or the choice of a oneof.
func (r *registry) structOf(a *arg, owner, cmd string, path []string, choice bool) (*typeDecl, error) {
	kind := declStruct
	if choice {
		kind = declChoice
	}
	// The parts decide the struct; the argument's own name and flags do not.
	sig := fmt.Sprintf("%d:", kind)
	for _, c := range a.Children {
		sig += argSig(c)
	}
	if d, ok := r.bySig[sig]; ok {
		d.users = appendUnique(d.users, owner)
		return d, nil
	}
	cand, qual := r.candidate(a, owner, cmd)
	d := &typeDecl{kind: kind, cand: cand, qual: qual, sig: sig, a: a, users: []string{owner}}
	sub := append(append([]string{}, path...), a.Name)
	var err error
	if choice {
		d.fields = newContainer(r, owner, cmd, false, sub)
		for _, c := range a.Children {
			if err := d.fields.place(c, true); err != nil {
				return nil, err
			}
		}
	} else {
		d.fields, err = layout(r, owner, cmd, a.Children, false, sub)
		if err != nil {
			return nil, err
		}
	}
	return r.add(d), nil
}

// reserved are exported names of the hand-written package.
var reserved = map[string]bool{
	"Client": true, "Options": true, "Reply": true, "Error": true, "Nil": true, "Null": true,
	"Batch": true, "Future": true, "ArgError": true, "UnexpectedReplyError": true, "CommandError": true,
	"ConnError": true, "HandshakeError": true, "FillerMode": true, "Connect": true, "NewClient": true,
	"ParseURL": true, "Count": true, "Value": true, "Type": true, "Name": true, "Key": true,
}

// assignNames gives every type its Go name: the short name when no other
// type wants it, else the name qualified by the (first) method using it.
func (r *registry) assignNames() error {
	taken := map[string]*typeDecl{}
	for _, d := range r.decls {
		if d.kind == declReply || d.kind == declOptions {
			if prev, dup := taken[d.name]; dup && prev != d {
				return fmt.Errorf("type name %s is used twice", d.name)
			}
			taken[d.name] = d
		}
	}
	wanted := map[string][]*typeDecl{}
	for _, d := range r.decls {
		if d.kind == declReply || d.kind == declOptions || d.cand == "" {
			continue
		}
		wanted[d.cand] = append(wanted[d.cand], d)
	}
	var rest []*typeDecl
	for _, d := range r.decls {
		if d.kind == declReply || d.kind == declOptions {
			continue
		}
		if d.cand != "" && len(wanted[d.cand]) == 1 && !reserved[d.cand] {
			if prev, ok := taken[d.cand]; ok {
				if prev.kind == declReply && d.kind == declStruct && sameFields(prev, d) {
					d.name = d.cand
					d.reuses = prev
					continue
				}
			} else {
				d.name = d.cand
				taken[d.name] = d
				continue
			}
		}
		rest = append(rest, d)
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].seq < rest[j].seq })
	for _, d := range rest {
		n := d.qual
		for i := 2; taken[n] != nil || reserved[n]; i++ {
			n = fmt.Sprintf("%s%d", d.qual, i)
		}
		d.name = n
		taken[n] = d
	}
	return nil
}

// sameFields reports a reply struct and an argument struct with the same
// field names and types, so that one Go type serves both.
func sameFields(reply, st *typeDecl) bool {
	if len(reply.rfields) != len(st.fields.params) {
		return false
	}
	for _, f := range reply.rfields {
		found := false
		for _, s := range st.fields.params {
			if s.name == f.name && s.typ.sig() == f.gt.sig() && (s.form == fValue) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
