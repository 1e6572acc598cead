package gen

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/respire-go/respire/gen/spec"
)

// Commands that deal with connections.
//
// The spec does not say which commands change the state of the connection
// they run on, but it marks those that deal with connections: the ACL
// category @connection, the groups connection, transactions and pubsub,
// and the flags no_auth (accepted before AUTH: connection set-up), pubsub
// and no_multi. Each such command is decided on: either it is refused on
// the client's shared connections (an exclusion, "NAME: - reason", in
// spec/replies.txt) or it was reviewed as safe there and is listed in
// reviewedSharedSafe with why. respgen gen fails on one that is neither, and on a
// stale entry, so that a server upgrade that brings such a command is
// decided on rather than let through as a method. Commands the spec does
// not mark (MONITOR, SCRIPT DEBUG, the replication commands) are refused
// by their exclusions alone.

// reviewedSharedSafe are the marked commands reviewed as safe on a connection the
// client shares between callers: they read, or act on the server or on
// other connections, and leave the connection as it was.
var reviewedSharedSafe = map[string]string{
	"CLIENT GETNAME":          "reads the connection's name",
	"CLIENT GETREDIR":         "reads where the connection's tracking pushes go",
	"CLIENT HELP":             "help text",
	"CLIENT ID":               "reads the connection's id",
	"CLIENT INFO":             "reads the connection's attributes",
	"CLIENT KILL":             "closes other connections; one of the client's own that it closes is dialed again, its callers failed as by any lost connection",
	"CLIENT LIST":             "reads every connection's attributes",
	"CLIENT PAUSE":            "pauses the server's clients, not this connection's state",
	"CLIENT TRACKINGINFO":     "reads the connection's tracking state",
	"CLIENT UNBLOCK":          "acts on another, blocked connection",
	"CLIENT UNPAUSE":          "ends a pause of the server's clients",
	"COMMAND":                 "reads the command table",
	"COMMAND COUNT":           "reads the command table",
	"COMMAND DOCS":            "reads the command table",
	"COMMAND GETKEYS":         "reads the command table",
	"COMMAND GETKEYSANDFLAGS": "reads the command table",
	"COMMAND HELP":            "help text",
	"COMMAND INFO":            "reads the command table",
	"COMMAND LIST":            "reads the command table",
	"ECHO":                    "answers its argument",
	"PING":                    "answers PONG; outside subscriber mode it changes nothing",
	"PUBLISH":                 "sends a message; the connection does not subscribe",
	"PUBSUB CHANNELS":         "reads the server's channels",
	"PUBSUB HELP":             "help text",
	"PUBSUB NUMPAT":           "reads the server's patterns",
	"PUBSUB NUMSUB":           "reads the server's channels",
	"PUBSUB SHARDCHANNELS":    "reads the server's shard channels",
	"PUBSUB SHARDNUMSUB":      "reads the server's shard channels",
	"SAVE":                    "saves the dataset; acts on the server",
	"SHUTDOWN":                "stops the server; acts on the server",
	"SPUBLISH":                "sends a message; the connection does not subscribe",
	"WAIT":                    "waits for replicas to acknowledge the connection's writes; sets nothing (a Client refuses it sent by itself, on a connection without the caller's writes: respire/wait.go)",
	"WAITAOF":                 "waits for the AOF to hold the connection's writes; sets nothing (a Client refuses it sent by itself, on a connection without the caller's writes: respire/wait.go)",
}

// touchesConnection reports why the spec marks c as dealing with
// connections, or "" when it does not.
func touchesConnection(c *spec.Command) string {
	switch {
	case slices.Contains(c.ACLCategories, "connection"):
		return "ACL category @connection"
	case c.Group == "connection" || c.Group == "transactions" || c.Group == "pubsub":
		return "group " + c.Group
	}
	for _, f := range []string{"no_auth", "pubsub", "no_multi"} {
		if slices.Contains(c.Flags, f) {
			return "flag " + f
		}
	}
	return ""
}

// checkConnState returns the errors for the marked commands that get a
// method (generated) and are not in sharedSafe, and for entries of
// sharedSafe that name a command of the spec that is not marked or is
// excluded; and the entries that name a generated command, for the
// documentation.
func checkConnState(s *spec.Spec, generated, excluded map[string]bool, sharedSafe map[string]string, file string) ([]string, []error) {
	var errs []error
	var listed []string
	marked := map[string]bool{}
	for i := range s.Commands {
		c := &s.Commands[i]
		why := touchesConnection(c)
		if why == "" {
			continue
		}
		marked[c.Name] = true
		if !generated[c.Name] {
			continue
		}
		if sharedSafe[c.Name] == "" {
			errs = append(errs, fmt.Errorf("%s: %s: the spec marks it as dealing with connections (%s): refuse it on shared "+
				"connections in %s (NAME: - reason, naming the safe way), or review it and add it to reviewedSharedSafe in gen/connstate.go",
				file, c.Name, why, file))
			continue
		}
		listed = append(listed, c.Name)
	}
	for _, name := range sortedKeys(sharedSafe) {
		if excluded[name] || s.Lookup(name) != nil && !marked[name] {
			errs = append(errs, fmt.Errorf("gen/connstate.go: reviewedSharedSafe lists %s, which is excluded or not marked by "+
				"the spec as dealing with connections: remove it", name))
		}
	}
	sort.Strings(listed)
	return listed, errs
}

// sharedSafeDoc is the part of zz_excluded.md that lists the reviewed
// commands that have a method.
func sharedSafeDoc(b *strings.Builder, listed []string, sharedSafe map[string]string) {
	b.WriteString("\n## Reviewed as safe on a shared connection\n\n")
	b.WriteString("The spec marks these commands as dealing with connections (ACL category @connection,\n")
	b.WriteString("groups connection, transactions and pubsub, flags no_auth, pubsub and no_multi), like\n")
	b.WriteString("those above; they were reviewed and keep their methods, because they leave the\n")
	b.WriteString("connection they run on as it was (`gen/connstate.go`). `respgen gen` fails on a marked\n")
	b.WriteString("command that is in neither list.\n\n")
	b.WriteString("| Command | Why it is safe |\n|---|---|\n")
	for _, name := range listed {
		fmt.Fprintf(b, "| `%s` | %s |\n", name, strings.ReplaceAll(sharedSafe[name], "|", "\\|"))
	}
}

// sharedSafe is Config.SharedSafe, or the reviewed list.
func (g *generator) sharedSafe() map[string]string {
	if g.cfg.SharedSafe != nil {
		return g.cfg.SharedSafe
	}
	return reviewedSharedSafe
}
