package spec

import (
	"slices"
	"strconv"
	"strings"
)

// Merge combines specs, listed from oldest to newest server, into one.
//
//   - The result has every command of every spec; each command's Servers
//     is the union of the servers that have it.
//   - Where servers describe a command differently (summary, arity, flags,
//     tips, key specs, history, ...), the newest wins: every field but
//     Arguments and Servers comes from the last spec in the call that has
//     the command. Respgen orders dumps with CompareForMerge.
//   - Arguments are merged by name, recursively into oneof and block
//     arguments, recognizing renamed arguments (see mergeArguments). The
//     newest list gives the order and the fields; an argument that only
//     older servers have is inserted right after the argument that
//     precedes it on those servers. An argument's Servers is set only when
//     some server that has the command lacks the argument.
//
// Merge does not modify its inputs and its result depends only on them.
func Merge(specs ...*Spec) *Spec {
	out := &Spec{}
	type occurrence struct {
		cmd     *Command
		servers []string
	}
	byName := map[string][]occurrence{}
	for _, s := range specs {
		if s == nil {
			continue
		}
		out.Servers = append(out.Servers, s.Servers...)
		for i := range s.Commands {
			c := &s.Commands[i]
			servers := c.Servers
			if len(servers) == 0 {
				servers = s.Servers
			}
			byName[c.Name] = append(byName[c.Name], occurrence{c, servers})
		}
	}
	out.Servers = sortedServers(out.Servers)

	for _, occs := range byName {
		newest := occs[len(occs)-1]
		cmd := *newest.cmd
		cmd.Arguments = withServers(newest.cmd.Arguments, newest.servers)
		var servers []string
		for i := len(occs) - 1; i >= 0; i-- {
			servers = append(servers, occs[i].servers...)
			if i < len(occs)-1 {
				cmd.Arguments = mergeArguments(cmd.Arguments, withServers(occs[i].cmd.Arguments, occs[i].servers))
			}
		}
		cmd.Servers = sortedServers(servers)
		cmd.Arguments = dropFullServers(cmd.Arguments, cmd.Servers)
		cmd.DocFlags = slices.Clone(cmd.DocFlags)
		cmd.Flags = slices.Clone(cmd.Flags)
		cmd.ACLCategories = slices.Clone(cmd.ACLCategories)
		cmd.Tips = slices.Clone(cmd.Tips)
		cmd.History = slices.Clone(cmd.History)
		cmd.KeySpecs = slices.Clone(cmd.KeySpecs)
		for i := range cmd.KeySpecs {
			cmd.KeySpecs[i].Flags = slices.Clone(cmd.KeySpecs[i].Flags)
		}
		out.Commands = append(out.Commands, cmd)
	}
	slices.SortFunc(out.Commands, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// withServers deep-copies args, giving every argument an explicit server
// list: its own, or else the command's.
func withServers(args []Argument, servers []string) []Argument {
	if args == nil {
		return nil
	}
	out := make([]Argument, len(args))
	for i, a := range args {
		if len(a.Servers) == 0 {
			a.Servers = servers
		}
		a.Servers = slices.Clone(a.Servers)
		a.Arguments = withServers(a.Arguments, servers)
		out[i] = a
	}
	return out
}

// mergeArguments merges an older server's arguments into newer ones. Both
// carry explicit server lists (see withServers).
//
// An older argument is the same as a newer one when it has the same name
// (and rank among equal names), or else when it was renamed: Redis 7.2
// renamed many arguments without changing what is sent (ZRANGE
// "offset_count" became "limit", MSET "key_value" became "data"). A rename
// is recognized between two unmatched arguments that sit between the same
// matched neighbours and look alike (see renamed).
func mergeArguments(newer, older []Argument) []Argument {
	match, into := matchArguments(newer, older)
	out := slices.Clone(newer)
	for j, i := range match {
		if i < 0 {
			continue
		}
		n, o := &out[i], older[j]
		refining := n.Servers
		n.Servers = append(slices.Clone(n.Servers), o.Servers...)
		switch {
		case len(n.Arguments) == 0:
			// The newer server has a plain argument: its shape wins.
		case len(o.Arguments) == 0:
			// A plain argument refined into parts (BITOP's operation: a
			// string in 7.0, a oneof of AND, OR, ... later): the older
			// server accepted through it the parts that every server
			// describing them has, not those that only some have, which
			// came later (BITOP DIFF: Redis 8.2, not in 8.0).
			n.Arguments = addServersWhereAll(n.Arguments, refining, o.Servers)
		default:
			n.Arguments = mergeArguments(n.Arguments, o.Arguments)
			if o.Token != "" && !strings.EqualFold(o.Token, n.Token) {
				// The token moved into a part (XINFO STREAM's FULL).
				n.Arguments = addServersToToken(n.Arguments, o.Token, o.Servers)
			}
		}
	}
	for j, i := range into {
		if i >= 0 {
			// An older argument that became one part of a newer oneof or
			// block (GEORADIUS's STORE key became a part of "store").
			o := older[j]
			out[i].Servers = append(slices.Clone(out[i].Servers), o.Servers...)
			out[i].Arguments = addServersToToken(out[i].Arguments, o.Token, o.Servers)
		}
	}
	// Insert the older-only arguments after the argument that precedes
	// them on the older server.
	at := make([]int, len(newer)) // position in out of each newer argument
	for i := range at {
		at[i] = i
	}
	pos := 0
	for j, i := range match {
		if i < 0 {
			i = into[j]
		}
		if i >= 0 {
			pos = at[i] + 1
			continue
		}
		out = slices.Insert(out, pos, older[j])
		for k := range at {
			if at[k] >= pos {
				at[k]++
			}
		}
		pos++
	}
	return out
}

// matchArguments returns, for each older argument, the index of the same
// newer argument or -1 (match), and, for an older argument that became a
// part of a newer oneof or block, the index of that newer argument or -1
// (into).
func matchArguments(newer, older []Argument) (match, into []int) {
	match = make([]int, len(older))
	into = make([]int, len(older))
	used := make([]bool, len(newer))
	newerKeys := argumentKeys(newer)
	for j, key := range argumentKeys(older) {
		into[j] = -1
		match[j] = slices.Index(newerKeys, key)
		if match[j] >= 0 {
			used[match[j]] = true
		}
	}
	lo := -1 // newer index of the last matched older argument so far
	for j := range older {
		if match[j] >= 0 {
			lo = match[j]
			continue
		}
		hi := len(newer)
		for k := j + 1; k < len(older); k++ {
			if match[k] >= 0 {
				hi = match[k]
				break
			}
		}
		for i := lo + 1; i < hi; i++ {
			if !used[i] && renamed(older[j], newer[i]) {
				match[j], used[i], lo = i, true, i
				break
			}
		}
		if match[j] >= 0 || older[j].Token == "" || len(older[j].Arguments) > 0 {
			continue
		}
		for i := lo + 1; i < hi; i++ {
			if hasPartWithToken(newer[i].Arguments, older[j].Token, older[j].Type) {
				into[j] = i
				break
			}
		}
	}
	return match, into
}

// hasPartWithToken reports whether parts has a plain argument with the
// given token and type.
func hasPartWithToken(parts []Argument, token, typ string) bool {
	for _, p := range parts {
		if len(p.Arguments) == 0 && p.Type == typ && strings.EqualFold(p.Token, token) {
			return true
		}
	}
	return false
}

// addServersToToken adds servers to the parts with the given token.
func addServersToToken(parts []Argument, token string, servers []string) []Argument {
	for i := range parts {
		if strings.EqualFold(parts[i].Token, token) {
			parts[i].Servers = append(slices.Clone(parts[i].Servers), servers...)
			parts[i].Arguments = addServers(parts[i].Arguments, servers)
		}
	}
	return parts
}

// renamed reports whether two arguments of different names at the same
// place are one argument renamed: the same type and token, or, for a
// oneof or block, the same token or a part in common. A plain argument
// refined into a oneof or block with the same token, or the reverse, also
// counts.
func renamed(o, n Argument) bool {
	leaf := func(a Argument) bool { return len(a.Arguments) == 0 }
	sameToken := strings.EqualFold(o.Token, n.Token)
	switch {
	case o.Type == n.Type && leaf(o) && leaf(n):
		return sameToken
	case o.Type == n.Type:
		return (sameToken && o.Token != "") || sharePart(o.Arguments, n.Arguments)
	case leaf(o) != leaf(n):
		// A plain argument refined into parts, or parts folded into one
		// plain argument (CLIENT LIST's ID: a block in 7.0).
		return sameToken && o.Token != ""
	}
	return false
}

// sharePart reports whether two lists of parts have a name or a token in
// common.
func sharePart(a, b []Argument) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Name == y.Name || (x.Token != "" && strings.EqualFold(x.Token, y.Token)) {
				return true
			}
		}
	}
	return false
}

// addServersWhereAll adds servers to the arguments of args that every
// server of all has, recursively.
func addServersWhereAll(args []Argument, all, servers []string) []Argument {
	for i := range args {
		if !containsAll(args[i].Servers, all) {
			continue
		}
		args[i].Servers = append(slices.Clone(args[i].Servers), servers...)
		args[i].Arguments = addServersWhereAll(args[i].Arguments, all, servers)
	}
	return args
}

func containsAll(list, want []string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

// addServers adds servers to every argument of args, recursively.
func addServers(args []Argument, servers []string) []Argument {
	for i := range args {
		args[i].Servers = append(slices.Clone(args[i].Servers), servers...)
		args[i].Arguments = addServers(args[i].Arguments, servers)
	}
	return args
}

// argumentKeys names arguments for matching: by name, and by rank among
// arguments of the same name should a list repeat one.
func argumentKeys(args []Argument) []string {
	keys := make([]string, len(args))
	seen := map[string]int{}
	for i, a := range args {
		keys[i] = a.Name + "#" + strconv.Itoa(seen[a.Name])
		seen[a.Name]++
	}
	return keys
}

// dropFullServers normalizes argument server lists and clears those that
// name every server of the command.
func dropFullServers(args []Argument, cmdServers []string) []Argument {
	for i := range args {
		a := &args[i]
		a.Servers = sortedServers(a.Servers)
		if slices.Equal(a.Servers, cmdServers) {
			a.Servers = nil
		}
		a.Arguments = dropFullServers(a.Arguments, cmdServers)
	}
	return args
}
