package spec

import (
	"fmt"
	"strings"
)

// This file decodes the RESP2 forms of COMMAND DOCS and COMMAND INFO. In
// RESP2 a map is a flat array of alternating keys and values.

// doc is one COMMAND DOCS entry.
type doc struct {
	summary, since, group, complexity string
	deprecatedSince, replacedBy       string
	module                            string
	docFlags                          []string
	history                           []HistoryEntry
	arguments                         []Argument
	subcommands                       map[string]*doc // by server name, "client|kill"
}

// info is one COMMAND INFO entry.
type info struct {
	name                       string // server name, "get" or "client|kill"
	arity                      int
	flags                      []string
	firstKey, lastKey, keyStep int
	aclCategories              []string
	tips                       []string
	keySpecs                   []KeySpec
	subcommands                []*info
}

type pair struct {
	key string
	val any
}

func asPairs(v any, where string) ([]pair, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: got %T, want a map", where, v)
	}
	if len(a)%2 != 0 {
		return nil, fmt.Errorf("%s: map with %d elements", where, len(a))
	}
	out := make([]pair, 0, len(a)/2)
	for i := 0; i < len(a); i += 2 {
		k, ok := a[i].(string)
		if !ok {
			return nil, fmt.Errorf("%s: map key is %T", where, a[i])
		}
		out = append(out, pair{k, a[i+1]})
	}
	return out, nil
}

func asArray(v any, where string) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: got %T, want an array", where, v)
	}
	return a, nil
}

func asString(v any, where string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: got %T, want a string", where, v)
	}
	return s, nil
}

func asInt(v any, where string) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%s: got %T, want an integer", where, v)
	}
	return int(n), nil
}

func asStrings(v any, where string) ([]string, error) {
	a, err := asArray(v, where)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], err = asString(e, where); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func unknownField(where, key string) error {
	return fmt.Errorf("%s: unknown field %q (teach gen/spec about it)", where, key)
}

func parseDocsMap(v any, where string) (map[string]*doc, error) {
	ps, err := asPairs(v, where)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*doc, len(ps))
	for _, p := range ps {
		d, err := parseDoc(p.val, where+" "+p.key)
		if err != nil {
			return nil, err
		}
		if _, dup := out[p.key]; dup {
			return nil, fmt.Errorf("%s: %s listed twice", where, p.key)
		}
		out[p.key] = d
	}
	return out, nil
}

func parseDoc(v any, where string) (*doc, error) {
	ps, err := asPairs(v, where)
	if err != nil {
		return nil, err
	}
	d := &doc{}
	for _, p := range ps {
		w := where + " " + p.key
		switch p.key {
		case "summary":
			d.summary, err = asString(p.val, w)
		case "since":
			d.since, err = asString(p.val, w)
		case "group":
			d.group, err = asString(p.val, w)
		case "complexity":
			d.complexity, err = asString(p.val, w)
		case "module":
			d.module, err = asString(p.val, w)
		case "deprecated_since":
			d.deprecatedSince, err = asString(p.val, w)
		case "replaced_by":
			d.replacedBy, err = asString(p.val, w)
		case "doc_flags":
			d.docFlags, err = asStrings(p.val, w)
			d.docFlags = lower(d.docFlags)
		case "history":
			d.history, err = parseHistory(p.val, w)
		case "arguments":
			d.arguments, err = parseArguments(p.val, w)
		case "subcommands":
			d.subcommands, err = parseDocsMap(p.val, w)
		default:
			err = unknownField(where, p.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

func parseHistory(v any, where string) ([]HistoryEntry, error) {
	a, err := asArray(v, where)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(a))
	for _, e := range a {
		s, err := asStrings(e, where)
		if err != nil {
			return nil, err
		}
		if len(s) != 2 {
			return nil, fmt.Errorf("%s: entry with %d elements, want 2", where, len(s))
		}
		out = append(out, HistoryEntry{Version: s[0], Change: s[1]})
	}
	return out, nil
}

func parseArguments(v any, where string) ([]Argument, error) {
	a, err := asArray(v, where)
	if err != nil {
		return nil, err
	}
	out := make([]Argument, 0, len(a))
	for _, e := range a {
		arg, err := parseArgument(e, where)
		if err != nil {
			return nil, err
		}
		out = append(out, arg)
	}
	return out, nil
}

func parseArgument(v any, where string) (Argument, error) {
	ps, err := asPairs(v, where)
	if err != nil {
		return Argument{}, err
	}
	var a Argument
	for _, p := range ps {
		if p.key == "name" {
			if a.Name, err = asString(p.val, where+" name"); err != nil {
				return Argument{}, err
			}
			where += " " + a.Name
		}
	}
	for _, p := range ps {
		w := where + " " + p.key
		switch p.key {
		case "name":
		case "type":
			a.Type, err = asString(p.val, w)
		case "display_text":
			a.DisplayText, err = asString(p.val, w)
		case "token":
			a.Token, err = asString(p.val, w)
		case "since":
			a.Since, err = asString(p.val, w)
		case "deprecated_since":
			a.DeprecatedSince, err = asString(p.val, w)
		case "summary":
			a.Summary, err = asString(p.val, w)
		case "value":
			a.Value, err = asString(p.val, w)
		case "key_spec_index":
			a.KeySpecIndex, err = asInt(p.val, w)
		case "flags":
			var flags []string
			if flags, err = asStrings(p.val, w); err != nil {
				break
			}
			for _, f := range flags {
				switch strings.ToLower(f) {
				case "optional":
					a.Optional = true
				case "multiple":
					a.Multiple = true
				case "multiple_token":
					a.MultipleToken = true
				default:
					err = fmt.Errorf("%s: unknown argument flag %q", w, f)
				}
			}
		case "arguments":
			a.Arguments, err = parseArguments(p.val, w)
		default:
			err = unknownField(where, p.key)
		}
		if err != nil {
			return Argument{}, err
		}
	}
	if a.Name == "" || a.Type == "" {
		return Argument{}, fmt.Errorf("%s: argument without name or type", where)
	}
	return a, nil
}

func parseInfoList(v any, where string) ([]*info, error) {
	a, err := asArray(v, where)
	if err != nil {
		return nil, err
	}
	out := make([]*info, 0, len(a))
	for _, e := range a {
		if e == nil { // COMMAND INFO of an unknown name
			continue
		}
		in, err := parseInfo(e, where)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// parseInfo decodes [name, arity, flags, first, last, step, acl
// categories, tips, key specs, subcommands]; the last four are Redis 7.0+.
func parseInfo(v any, where string) (*info, error) {
	a, err := asArray(v, where)
	if err != nil {
		return nil, err
	}
	if len(a) != 10 {
		return nil, fmt.Errorf("%s: entry with %d elements, want 10 (Redis 7.0 or newer)", where, len(a))
	}
	in := &info{}
	if in.name, err = asString(a[0], where+" name"); err != nil {
		return nil, err
	}
	where += " " + in.name
	if in.arity, err = asInt(a[1], where+" arity"); err != nil {
		return nil, err
	}
	if in.flags, err = asStrings(a[2], where+" flags"); err != nil {
		return nil, err
	}
	in.flags = lower(in.flags)
	if in.firstKey, err = asInt(a[3], where+" first key"); err != nil {
		return nil, err
	}
	if in.lastKey, err = asInt(a[4], where+" last key"); err != nil {
		return nil, err
	}
	if in.keyStep, err = asInt(a[5], where+" key step"); err != nil {
		return nil, err
	}
	if in.aclCategories, err = asStrings(a[6], where+" acl categories"); err != nil {
		return nil, err
	}
	for i, c := range in.aclCategories {
		in.aclCategories[i] = strings.ToLower(strings.TrimPrefix(c, "@"))
	}
	if in.tips, err = asStrings(a[7], where+" tips"); err != nil {
		return nil, err
	}
	in.tips = lower(in.tips)
	specs, err := asArray(a[8], where+" key specs")
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		ks, err := parseKeySpec(s, where+" key spec")
		if err != nil {
			return nil, err
		}
		in.keySpecs = append(in.keySpecs, ks)
	}
	if a[9] != nil {
		subs, err := asArray(a[9], where+" subcommands")
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			sub, err := parseInfo(s, where+" subcommand")
			if err != nil {
				return nil, err
			}
			in.subcommands = append(in.subcommands, sub)
		}
	}
	return in, nil
}

func parseKeySpec(v any, where string) (KeySpec, error) {
	ps, err := asPairs(v, where)
	if err != nil {
		return KeySpec{}, err
	}
	var ks KeySpec
	for _, p := range ps {
		w := where + " " + p.key
		switch p.key {
		case "notes":
			ks.Notes, err = asString(p.val, w)
		case "flags":
			ks.Flags, err = asStrings(p.val, w)
			ks.Flags = sortedStrings(ks.Flags)
		case "begin_search":
			ks.BeginSearch, err = parseBeginSearch(p.val, w)
		case "find_keys":
			ks.FindKeys, err = parseFindKeys(p.val, w)
		default:
			err = unknownField(where, p.key)
		}
		if err != nil {
			return KeySpec{}, err
		}
	}
	return ks, nil
}

// typedSpec decodes {type: T, spec: {...}} and returns T and the spec's
// pairs.
func typedSpec(v any, where string) (string, []pair, error) {
	ps, err := asPairs(v, where)
	if err != nil {
		return "", nil, err
	}
	var typ string
	var spec []pair
	for _, p := range ps {
		switch p.key {
		case "type":
			if typ, err = asString(p.val, where+" type"); err != nil {
				return "", nil, err
			}
		case "spec":
			if spec, err = asPairs(p.val, where+" spec"); err != nil {
				return "", nil, err
			}
		default:
			return "", nil, unknownField(where, p.key)
		}
	}
	return typ, spec, nil
}

func parseBeginSearch(v any, where string) (BeginSearch, error) {
	typ, spec, err := typedSpec(v, where)
	if err != nil {
		return BeginSearch{}, err
	}
	b := BeginSearch{Type: typ}
	for _, p := range spec {
		w := where + " " + p.key
		switch {
		case typ == "index" && p.key == "index":
			b.Spec.Index, err = asInt(p.val, w)
		case typ == "keyword" && p.key == "keyword":
			b.Spec.Keyword, err = asString(p.val, w)
		case typ == "keyword" && p.key == "startfrom":
			b.Spec.StartFrom, err = asInt(p.val, w)
		default:
			err = unknownField(where+" "+typ, p.key)
		}
		if err != nil {
			return BeginSearch{}, err
		}
	}
	switch typ {
	case "index", "keyword", "unknown":
	default:
		return BeginSearch{}, fmt.Errorf("%s: unknown type %q", where, typ)
	}
	return b, nil
}

func parseFindKeys(v any, where string) (FindKeys, error) {
	typ, spec, err := typedSpec(v, where)
	if err != nil {
		return FindKeys{}, err
	}
	f := FindKeys{Type: typ}
	for _, p := range spec {
		w := where + " " + p.key
		switch {
		case typ == "range" && p.key == "lastkey":
			f.Spec.LastKey, err = asInt(p.val, w)
		case typ == "range" && p.key == "limit":
			f.Spec.Limit, err = asInt(p.val, w)
		case (typ == "range" || typ == "keynum") && p.key == "keystep":
			f.Spec.KeyStep, err = asInt(p.val, w)
		case typ == "keynum" && p.key == "keynumidx":
			f.Spec.KeyNumIdx, err = asInt(p.val, w)
		case typ == "keynum" && p.key == "firstkey":
			f.Spec.FirstKey, err = asInt(p.val, w)
		default:
			err = unknownField(where+" "+typ, p.key)
		}
		if err != nil {
			return FindKeys{}, err
		}
	}
	switch typ {
	case "range", "keynum", "unknown":
	default:
		return FindKeys{}, fmt.Errorf("%s: unknown type %q", where, typ)
	}
	return f, nil
}

func lower(v []string) []string {
	for i, s := range v {
		v[i] = strings.ToLower(s)
	}
	return v
}
