package gen

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/respire-go/respire/gen/spec"
)

// Supplement is what we add to the servers' own description of their
// commands (spec/supplement.json): facts from the documentation, in our
// words, where COMMAND DOCS says too little. The generator applies it to
// the spec before generating and notes, for every entry, when the servers'
// docs have come to cover it, so that the entry can go.
type Supplement struct {
	File     string              `json:"-"`
	Commands []SupplementCommand `json:"commands"`
}

// SupplementCommand supplements one command.
type SupplementCommand struct {
	Name string `json:"name"`
	// Why says, for a reader of the file, what COMMAND DOCS gets wrong.
	Why string `json:"why"`
	// Replace gives arguments in the spec's own format that stand in for
	// the argument at a path ("format", "condition/ifdeq-digest"): the
	// first replaces it, the others follow it.
	Replace []SupplementReplace `json:"replace,omitempty"`
	// Lacks names, for a server whose COMMAND DOCS describe none of the
	// command's arguments, the arguments (token, else name) it does not
	// have; it is taken to have all the others.
	Lacks map[string][]string `json:"lacks,omitempty"`
	// Types corrects the type of the argument at a path ("min",
	// "condition/ifdeq-digest") where COMMAND DOCS states it too
	// narrowly: score bounds typed double take "(1.5" and "-inf".
	Types map[string]string `json:"types,omitempty"`
	// Zero names the optional numbers (token, else name) whose zero is a
	// value of its own rather than "not given", with what 0 means there
	// ("blocks without a time limit"). Their Go fields are pointers.
	Zero map[string]string `json:"zero,omitempty"`
	// TypesWithout retypes arguments in the methods that do not send a
	// given argument: ZRANGE's start and stop are indexes (integers)
	// unless BYSCORE or BYLEX ("sortby") makes them scores or names.
	TypesWithout map[string]map[string]string `json:"typesWithout,omitempty"`
	// Units names the integers (token, else name) that are durations in a
	// unit COMMAND DOCS do not state, with that unit ("seconds" or
	// "milliseconds"): WAIT's timeout. Their Go type is time.Duration.
	Units map[string]string `json:"units,omitempty"`
}

// SupplementReplace is one replaced argument.
type SupplementReplace struct {
	Path string          `json:"path"`
	With []spec.Argument `json:"with"`
}

// LoadSupplement reads a supplement file.
func LoadSupplement(path string) (*Supplement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Supplement
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.File = path
	return &s, nil
}

// applySupplement returns a copy of sp with the supplement's replacements
// made, the servers' lacks to apply after the arguments are built, and
// notes on entries the servers' docs now cover.
func applySupplement(sp *spec.Spec, sup *Supplement) (*spec.Spec, map[string]map[string][]string, []string, error) {
	if sup == nil {
		return sp, nil, nil, nil
	}
	out := *sp
	out.Commands = slices.Clone(sp.Commands)
	lacks := map[string]map[string][]string{}
	var notes []string
	var errs []error
	seen := map[string]bool{}
	for _, e := range sup.Commands {
		fail := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: %s: %s", sup.File, e.Name, fmt.Sprintf(format, a...)))
		}
		if seen[e.Name] {
			fail("a second entry")
			continue
		}
		seen[e.Name] = true
		i := slices.IndexFunc(out.Commands, func(c spec.Command) bool { return c.Name == e.Name })
		if i < 0 {
			fail("not a command of the spec")
			continue
		}
		cmd := &out.Commands[i]
		undoc := undocumentedServers(cmd)
		for _, r := range e.Replace {
			args, covered, err := replaceArgument(cmd.Arguments, strings.Split(r.Path, "/"), r.With)
			if err != nil {
				fail("replace %s: %v", r.Path, err)
				continue
			}
			if covered {
				notes = append(notes, fmt.Sprintf("%s: the servers' docs now describe %s of %s as the supplement does; remove the replacement", sup.File, r.Path, e.Name))
			}
			cmd.Arguments = args
		}
		for _, path := range sortedKeys(e.Types) {
			args, covered, err := retype(cmd.Arguments, strings.Split(path, "/"), e.Types[path])
			if err != nil {
				fail("types %s: %v", path, err)
				continue
			}
			if covered {
				notes = append(notes, fmt.Sprintf("%s: the servers' docs now give %s of %s the type %s; remove it from types", sup.File, path, e.Name, e.Types[path]))
			}
			cmd.Arguments = args
		}
		if len(e.Replace) > 0 {
			// The servers that described no arguments before the
			// replacement still have the others.
			cmd.Arguments = withUndocumented(cmd.Arguments, undoc, cmd.Servers)
		}
		for srv, names := range e.Lacks {
			switch {
			case !slices.Contains(cmd.Servers, srv):
				fail("lacks: %s does not have the command", srv)
			case !slices.Contains(undoc, srv):
				notes = append(notes, fmt.Sprintf("%s: %s's docs now describe the arguments of %s; remove its lacks entry", sup.File, srv, e.Name))
			default:
				if lacks[e.Name] == nil {
					lacks[e.Name] = map[string][]string{}
				}
				lacks[e.Name][srv] = names
			}
		}
	}
	return &out, lacks, notes, errors.Join(errs...)
}

// replaceArgument replaces the argument at path in list by with. covered
// reports that the list already holds exactly with there.
func replaceArgument(list []spec.Argument, path []string, with []spec.Argument) ([]spec.Argument, bool, error) {
	return editAt(list, path, func(out []spec.Argument, i int) ([]spec.Argument, bool) {
		covered := len(with) > 0 && i+len(with) <= len(out) && sameShape(out[i:i+len(with)], with)
		return slices.Replace(out, i, i+1, with...), covered
	})
}

// retype sets the type of the argument at path; covered reports that it
// already had that type.
func retype(list []spec.Argument, path []string, typ string) ([]spec.Argument, bool, error) {
	return editAt(list, path, func(out []spec.Argument, i int) ([]spec.Argument, bool) {
		covered := out[i].Type == typ
		out[i].Type = typ
		return out, covered
	})
}

// editAt applies edit to a copy of the list holding the argument at path
// (names separated into parts), at that argument's index, and returns a
// copy of list with the result in place.
func editAt(list []spec.Argument, path []string, edit func(out []spec.Argument, i int) ([]spec.Argument, bool)) ([]spec.Argument, bool, error) {
	i := slices.IndexFunc(list, func(a spec.Argument) bool { return a.Name == path[0] })
	if i < 0 {
		return nil, false, fmt.Errorf("no argument %q", path[0])
	}
	out := slices.Clone(list)
	if len(path) > 1 {
		sub, covered, err := editAt(list[i].Arguments, path[1:], edit)
		if err != nil {
			return nil, false, err
		}
		out[i].Arguments = sub
		return out, covered, nil
	}
	out, covered := edit(out, i)
	return out, covered, nil
}

// sameShape compares arguments by what is sent, not how they are shown.
func sameShape(a, b []spec.Argument) bool {
	strip := func(l []spec.Argument) []spec.Argument {
		var f func([]spec.Argument) []spec.Argument
		f = func(l []spec.Argument) []spec.Argument {
			out := make([]spec.Argument, len(l))
			for i, x := range l {
				out[i] = spec.Argument{Name: x.Name, Type: x.Type, Token: x.Token, Optional: x.Optional,
					Multiple: x.Multiple, MultipleToken: x.MultipleToken, Arguments: f(x.Arguments)}
			}
			return out
		}
		return f(l)
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// retypeWithout applies a command's TypesWithout to the arguments of one
// method: where the argument named by a key is not among them, the
// arguments it names get the type given.
func retypeWithout(list []*arg, cmd string, without map[string]map[string]string) error {
	for _, sel := range sortedKeys(without) {
		if _, err := findSelector(list, sel); err == nil {
			continue // sent by this method: the spec's types hold
		}
		for _, name := range sortedKeys(without[sel]) {
			typ := without[sel][name]
			if !eachNamed(list, name, func(a *arg) {
				a.Type = typ
				a.scalar = classify(&spec.Argument{Name: a.Name, Type: typ, Token: a.Token})
			}) {
				return fmt.Errorf("typesWithout: %s has no argument %s", cmd, name)
			}
		}
	}
	return nil
}

// applyZero marks the optional numbers named in zero (by token, else by
// name) as having a zero of their own.
func applyZero(args []*arg, cmd *spec.Command, zero map[string]string) error {
	var errs []error
	for _, name := range sortedKeys(zero) {
		found := eachNamed(args, name, func(a *arg) {
			if !numeric(a.scalar) {
				errs = append(errs, fmt.Errorf("zero: %s of %s is not a number", name, cmd.Name))
			}
			a.zeroMeans = zero[name]
		})
		if !found {
			errs = append(errs, fmt.Errorf("zero: %s has no argument %s", cmd.Name, name))
		}
	}
	return errors.Join(errs...)
}

// applyUnits makes the integers named in units (by token, else by name)
// durations in the unit given.
func applyUnits(args []*arg, cmd *spec.Command, units map[string]string) error {
	var errs []error
	for _, name := range sortedKeys(units) {
		var kind scalarKind
		switch units[name] {
		case "seconds":
			kind = scSeconds
		case "milliseconds":
			kind = scMillis
		default:
			errs = append(errs, fmt.Errorf("units: %s of %s: unit %q is not seconds or milliseconds", name, cmd.Name, units[name]))
			continue
		}
		found := eachNamed(args, name, func(a *arg) {
			if a.Type != "integer" {
				errs = append(errs, fmt.Errorf("units: %s of %s is a %s, not an integer", name, cmd.Name, a.Type))
			}
			a.scalar = kind
		})
		if !found {
			errs = append(errs, fmt.Errorf("units: %s has no argument %s", cmd.Name, name))
		}
	}
	return errors.Join(errs...)
}

// applyLacks removes the servers that lack them from the arguments named
// (by token, else by name), anywhere in the tree.
func applyLacks(args []*arg, cmd *spec.Command, lacks map[string][]string) error {
	for srv, names := range lacks {
		for _, name := range names {
			found := eachNamed(args, name, func(a *arg) {
				have := a.Servers
				if len(have) == 0 {
					have = cmd.Servers
				}
				a.Servers = slices.DeleteFunc(slices.Clone(have), func(s string) bool { return s == srv })
			})
			if !found {
				return fmt.Errorf("lacks: %s has no argument %s", cmd.Name, name)
			}
		}
	}
	return nil
}

// eachNamed calls f for every argument of the tree named name (its token,
// else its spec name) and reports whether there was one.
func eachNamed(list []*arg, name string, f func(*arg)) bool {
	found := false
	for _, a := range list {
		if strings.EqualFold(a.Token, name) || (a.Token == "" && a.Name == name) {
			found = true
			f(a)
		}
		if eachNamed(a.Children, name, f) {
			found = true
		}
	}
	return found
}
