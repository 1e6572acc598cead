package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// rootModule is the module path of the repository's root go.mod.
const rootModule = "github.com/respire-go/respire"

// repoRoot returns the repository root: the nearest directory above the
// working directory (or, failing that, this source file) that holds .git or
// the root module's go.mod. It is "" when neither is found, as when the tests
// run from a copied test binary.
var repoRoot = sync.OnceValue(func() string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if isRepoRoot(dir) {
				return dir
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return ""
})

// isRepoRoot reports whether dir holds .git or the root module's go.mod.
func isRepoRoot(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if mod, ok := strings.CutPrefix(line, "module "); ok {
			return strings.Trim(strings.TrimSpace(mod), `"`) == rootModule
		}
	}
	return false
}

// errNoBinary says that no server binary was found for a flavor.
var errNoBinary = errors.New("no server binary")

// Binary returns the executable that runs flavor f, found as the package
// documentation says, for programs that start servers of their own (the
// soak tool). An override in the environment that does not name an
// executable is an error of its own, not a reason to look elsewhere.
func Binary(f Flavor) (string, error) {
	if p := os.Getenv(f.envVar()); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("%s=%s is not an executable file", f.envVar(), p)
		}
		return p, nil
	}
	if dir := serversDir(); dir != "" {
		p := filepath.Join(dir, "bin", string(f)+"-server")
		if isExecutable(p) {
			return p, nil
		}
	}
	if f == Redis70 {
		if p, err := exec.LookPath("redis-server"); err == nil {
			return p, nil
		}
	}
	return "", errNoBinary
}

// serversDir is where `make servers` installs: RESPIRE_SERVERS_DIR when
// set (as for scripts/servers.sh), else .servers at the repository root;
// "" when neither is known.
func serversDir() string {
	if d := os.Getenv("RESPIRE_SERVERS_DIR"); d != "" {
		return d
	}
	if root := repoRoot(); root != "" {
		return filepath.Join(root, ".servers")
	}
	return ""
}

// isExecutable reports whether p is a regular file with an execute bit set.
func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// installHint tells a developer how to get a server binary for f.
func installHint(f Flavor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "harness: no %s server binary found and no Docker engine reachable.\n", f)
	fmt.Fprintf(&b, "  Run `make servers` at the repository root (installs .servers/bin/%s-server),\n", f)
	if f == Redis70 {
		b.WriteString("  or `apt-get install redis-server` (Debian bookworm ships Redis 7.0.15),\n")
	}
	fmt.Fprintf(&b, "  or point %s at a %s server executable.", f.envVar(), f)
	return b.String()
}
