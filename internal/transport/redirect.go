package transport

import (
	"fmt"
	"strconv"
	"strings"
)

// Valkey 8 and later let a standalone replica redirect a client that
// declared it can follow (CLIENT CAPA redirect): a data-access command that
// the replica would refuse or, without READONLY, every data-access command,
// is answered with -REDIRECT host:port, the primary's address as the
// replica knows it. READONLY keeps reads on the replica, as they are for a
// client that declared nothing. The respire package follows the redirect.

// redirectSteps are the handshake steps of cfg.Redirect: CLIENT CAPA
// redirect and READONLY, on a standalone Valkey 8 or later only (as HELLO
// told: info and mode), so that no other server ever sees them. Both are
// optional: a server that refuses them answers writes with -READONLY, as
// before.
func redirectSteps(cfg *Config, info ConnInfo, mode string) []hsStep {
	if !cfg.Redirect || cfg.ReadOnly || !supportsRedirect(info, mode) {
		return nil
	}
	return []hsStep{
		{name: "CLIENT CAPA", args: []string{"CLIENT", "CAPA", "redirect"}, optional: true},
		{name: "READONLY", args: []string{"READONLY"}, optional: true},
	}
}

// supportsRedirect reports a standalone Valkey 8 or later.
func supportsRedirect(info ConnInfo, mode string) bool {
	return info.Server == "valkey" && mode == "standalone" && majorVersion(info.Version) >= 8
}

// majorVersion is the major number of a version such as "8.1.1", 0 when it
// cannot be read.
func majorVersion(v string) int {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	return n
}

// helloString returns the string value of key in a HELLO reply, "" when
// absent.
func helloString(v treeReply, key string) string {
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Str == key {
			return v.Elems[i+1].Str
		}
	}
	return ""
}

// selectError names the database and the node in a refused SELECT, and on
// a cluster says which servers allow databases other than 0. It wraps err,
// the server's *ServerError.
func selectError(cfg *Config, mode string, err error) error {
	if mode == "cluster" || cfg.NodeID != "" {
		return fmt.Errorf("database %d on cluster node %s: %w (a cluster allows databases other than 0 on Valkey 9 and later, "+
			"below its cluster-databases setting; Redis and older Valkey clusters have only database 0)", cfg.DB, cfg.Addr, err)
	}
	return fmt.Errorf("database %d on %s: %w", cfg.DB, cfg.Addr, err)
}
