package spec

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// Server identifies a live server.
type Server struct {
	// ID is the product and its version: "redis-8.0.2", "valkey-8.1.1".
	ID string
	// RedisVersion is INFO's redis_version. Valkey reports there the Redis
	// version it is compatible with (7.2.4 for Valkey 8.x), which places it
	// between Redis releases when ordering dumps for Merge.
	RedisVersion string
}

// CompareForMerge orders servers from oldest to newest command table, the
// order Merge expects: by RedisVersion, then by ID. With the servers this
// repository targets it gives redis-7.0.15 < valkey-8.1.1 < redis-8.0.2.
func CompareForMerge(a, b Server) int {
	if c := compareVersions(a.RedisVersion, b.RedisVersion); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Identify asks the server at addr (host:port) who it is (INFO server).
func Identify(ctx context.Context, addr string) (Server, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return Server{}, err
	}
	defer c.Close()
	return identify(ctx, c)
}

func identify(ctx context.Context, c *conn) (Server, error) {
	v, err := c.do(ctx, "INFO", "server")
	if err != nil {
		return Server{}, fmt.Errorf("INFO server: %w", err)
	}
	text, ok := v.(string)
	if !ok {
		return Server{}, fmt.Errorf("INFO server: reply is %T, want a string", v)
	}
	info := map[string]string{}
	for line := range strings.Lines(text) {
		k, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			info[k] = val
		}
	}
	s := Server{RedisVersion: info["redis_version"]}
	switch {
	case info["valkey_version"] != "":
		s.ID = "valkey-" + info["valkey_version"]
	case info["server_name"] == "valkey":
		s.ID = "valkey-" + s.RedisVersion
	case s.RedisVersion != "":
		s.ID = "redis-" + s.RedisVersion
	default:
		return Server{}, fmt.Errorf("INFO server: no redis_version or valkey_version")
	}
	return s, nil
}

// Dump reads the command table of the server at addr (host:port) with
// COMMAND DOCS and COMMAND INFO and returns it as a one-server Spec whose
// Servers lists are serverID. An empty serverID is found with Identify.
//
// Dump is strict: a reply field or flag it does not know is an error, so
// that a newer server's additions are noticed and modelled rather than
// silently dropped.
func Dump(ctx context.Context, addr, serverID string) (*Spec, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if serverID == "" {
		s, err := identify(ctx, c)
		if err != nil {
			return nil, err
		}
		serverID = s.ID
	}

	docsReply, err := c.do(ctx, "COMMAND", "DOCS")
	if err != nil {
		return nil, fmt.Errorf("COMMAND DOCS: %w", err)
	}
	infoReply, err := c.do(ctx, "COMMAND", "INFO")
	if err != nil {
		return nil, fmt.Errorf("COMMAND INFO: %w", err)
	}
	docs, err := parseDocsMap(docsReply, "COMMAND DOCS")
	if err != nil {
		return nil, err
	}
	infos, err := parseInfoList(infoReply, "COMMAND INFO")
	if err != nil {
		return nil, err
	}

	s := &Spec{Servers: []string{serverID}}
	seen := map[string]bool{}
	var add func(in *info, d *doc, container string) error
	add = func(in *info, d *doc, container string) error {
		cmd := buildCommand(in, d, container, serverID)
		if seen[cmd.Name] {
			return fmt.Errorf("command %s listed twice", cmd.Name)
		}
		seen[cmd.Name] = true
		s.Commands = append(s.Commands, cmd)
		for _, sub := range in.subcommands {
			var subDoc *doc
			if d != nil {
				subDoc = d.subcommands[sub.name]
			}
			if err := add(sub, subDoc, cmd.Name); err != nil {
				return err
			}
		}
		return nil
	}
	for _, in := range infos {
		if err := add(in, docs[in.name], ""); err != nil {
			return nil, err
		}
	}
	if err := checkDocsCovered(docs, seen, ""); err != nil {
		return nil, err
	}
	slices.SortFunc(s.Commands, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// checkDocsCovered reports a COMMAND DOCS entry that COMMAND INFO lacks:
// without its arity and flags it cannot be described.
func checkDocsCovered(docs map[string]*doc, seen map[string]bool, where string) error {
	for name, d := range docs {
		if !seen[commandName(name)] {
			return fmt.Errorf("COMMAND DOCS has %s%s, COMMAND INFO does not", where, name)
		}
		if err := checkDocsCovered(d.subcommands, seen, where); err != nil {
			return err
		}
	}
	return nil
}

// commandName turns a server name ("client|kill") into ours ("CLIENT KILL").
func commandName(serverName string) string {
	return strings.ToUpper(strings.ReplaceAll(serverName, "|", " "))
}

func buildCommand(in *info, d *doc, container, serverID string) Command {
	c := Command{
		Name:          commandName(in.name),
		Container:     container,
		Arity:         in.arity,
		Flags:         sortedStrings(in.flags),
		ACLCategories: sortedStrings(in.aclCategories),
		Tips:          sortedStrings(in.tips),
		FirstKey:      in.firstKey,
		LastKey:       in.lastKey,
		KeyStep:       in.keyStep,
		KeySpecs:      in.keySpecs,
		Servers:       []string{serverID},
	}
	if d != nil {
		c.Group = d.group
		c.Summary = d.summary
		c.Since = d.since
		c.Complexity = d.complexity
		c.DocFlags = sortedStrings(d.docFlags)
		c.DeprecatedSince = d.deprecatedSince
		c.ReplacedBy = d.replacedBy
		c.Module = d.module
		c.History = d.history
		c.Arguments = d.arguments
	}
	return c
}
