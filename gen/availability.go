package gen

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/respire-go/respire/gen/spec"
)

// Per-argument availability. An argument's "servers" list in the spec says
// which of the command's servers describe it. A server that describes none
// of the command's arguments (Redis 8.0's vector sets: COMMAND DOCS gives
// them no arguments at all) says nothing about any one argument, so it is
// counted as having them all; a server that describes some arguments but
// not this one lacks it, and the generated code refuses the argument there
// before anything is sent (cmd.needs).

// undocumentedServers returns the servers of cmd that describe none of its
// top-level arguments.
func undocumentedServers(cmd *spec.Command) []string {
	if len(cmd.Arguments) == 0 {
		return nil
	}
	documented := map[string]bool{}
	for _, a := range cmd.Arguments {
		if len(a.Servers) == 0 {
			return nil // described by every server of the command
		}
		for _, s := range a.Servers {
			documented[s] = true
		}
	}
	var out []string
	for _, s := range cmd.Servers {
		if !documented[s] {
			out = append(out, s)
		}
	}
	return out
}

// withUndocumented adds the servers extra to every argument that carries a
// server list; a list that then names every server of the command is
// dropped, as the spec writes it.
func withUndocumented(list []spec.Argument, extra, all []string) []spec.Argument {
	if len(extra) == 0 || len(list) == 0 {
		return list
	}
	out := make([]spec.Argument, len(list))
	for i, a := range list {
		if len(a.Servers) > 0 {
			s := append(slices.Clone(a.Servers), extra...)
			slices.SortFunc(s, spec.CompareServers)
			s = slices.Compact(s)
			if len(s) >= len(all) {
				s = nil
			}
			a.Servers = s
		}
		a.Arguments = withUndocumented(a.Arguments, extra, all)
		out[i] = a
	}
	return out
}

// needsCall is the check that the connected server has argument a, sent
// when the caller gives it; nil when every server of the command has it.
func needsCall(a *arg, label string) jen.Code {
	if len(a.Servers) == 0 {
		return nil
	}
	var set []jen.Code
	for _, s := range a.Servers {
		set = append(set, jen.Id(serverConst(s)))
	}
	return x().Dot("needs").Call(jen.Lit(label), orList(set))
}

// argLabel names an argument in an *UnsupportedError: its token when it
// has one (IFEQ), else its spec name.
func argLabel(a *arg) string {
	if a.Token != "" {
		return a.Token
	}
	return a.Name
}
