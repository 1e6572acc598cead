package harness

import (
	"strings"
	"testing"

	"github.com/respire-go/respire/respiretest/testserver"
)

// Flavor names a server product and minor version, as "redis-8.0".
type Flavor string

// The flavors every integration test is expected to pass against.
const (
	// Redis70 is Redis 7.0 (7.0.15, Debian bookworm's build).
	Redis70 Flavor = "redis-7.0"
	// Redis80 is Redis 8.0 (8.0.2, Debian trixie's build).
	Redis80 Flavor = "redis-8.0"
	// Valkey81 is Valkey 8.1 (8.1.1, Debian trixie's build).
	Valkey81 Flavor = "valkey-8.1"
	// Redis86 is Redis 8.6 (8.6.3, Debian experimental's build).
	Redis86 Flavor = "redis-8.6"
	// Valkey91 is Valkey 9.1 (9.1.2, Debian sid's build).
	Valkey91 Flavor = "valkey-9.1"
)

// DefaultFlavor is the flavor Start uses when Config.Flavor is empty and no
// external server is in use.
const DefaultFlavor = Redis70

// AllFlavors lists the supported flavors: the three older ones first, then
// the two newest (kept in this order so that a test's output reads the same).
var AllFlavors = []Flavor{Redis70, Redis80, Valkey81, Redis86, Valkey91}

// String returns the flavor's name.
func (f Flavor) String() string { return string(f) }

// known reports whether f is one of AllFlavors.
func (f Flavor) known() bool {
	for _, g := range AllFlavors {
		if f == g {
			return true
		}
	}
	return false
}

// envVar is the environment variable that overrides f's binary:
// RESPIRE_SERVER_REDIS_8_0 for redis-8.0.
func (f Flavor) envVar() string {
	up := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, string(f))
	return "RESPIRE_SERVER_" + up
}

// versionPrefix is the prefix every version string of f starts with: "8.0.".
func (f Flavor) versionPrefix() string {
	_, v, _ := strings.Cut(string(f), "-")
	return v + "."
}

// ForEachFlavor runs fn as a subtest named after each flavor in AllFlavors.
// fn may call t.Parallel; every harness function is safe for concurrent use.
func ForEachFlavor(t *testing.T, fn func(t *testing.T, f Flavor)) {
	t.Helper()
	for _, f := range AllFlavors {
		t.Run(string(f), func(t *testing.T) { fn(t, f) })
	}
}

// serverVersion returns the product version and flavor from an INFO server
// reply: Valkey reports valkey_version, Redis only redis_version.
func serverVersion(info string) (string, Flavor) {
	if v := testserver.InfoField(info, "valkey_version"); v != "" {
		return v, flavorOf("valkey", v)
	}
	v := testserver.InfoField(info, "redis_version")
	return v, flavorOf("redis", v)
}

// flavorOf names the flavor of product at version v: ("redis", "8.0.2") is
// "redis-8.0".
func flavorOf(product, v string) Flavor {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return Flavor(product + "-" + v)
	}
	return Flavor(product + "-" + parts[0] + "." + parts[1])
}
