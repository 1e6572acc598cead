// Package goredissuite runs the test suites of go-redis itself, and of
// libraries built on it, through Respire's goredis adapter: the tests are
// taken from the module cache at run time, never committed here; a small
// redirection of ours (the files under redirect/) is copied beside them in
// a temporary copy of the module, and the servers are the harness's, on
// free loopback ports.
//
// The tests are slow (minutes) and download modules: they run only with
// RESPIRE_GOREDIS_SUITE set (make goredis-suite, which CI runs after make
// test): "adapter" runs the suites through the adapter, "both" on go-redis
// too. make test skips them.
package goredissuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// workDir is where the module called name is copied: under
// $RESPIRE_SUITE_DIR when set (kept after the run, to rerun a test binary
// by hand), else in a temporary directory of the test.
func workDir(t *testing.T, name string) string {
	if d := os.Getenv("RESPIRE_SUITE_DIR"); d != "" {
		dir := filepath.Join(d, name)
		require.NoError(t, os.RemoveAll(dir))
		return dir
	}
	return filepath.Join(t.TempDir(), name)
}

// moduleDir returns the directory of mod@version in the module cache,
// downloading it when missing.
func moduleDir(mod, version string) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", mod+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", mod, version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", mod, version, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, info.Error)
	}
	return info.Dir, nil
}

// copyTree copies the module at src into dst, writable (the module cache
// is read-only).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// edit applies the replacements (old, new pairs) to the file, each of
// which must occur at least once: a newer upstream that no longer has the
// text fails here, rather than running unredirected.
func edit(path string, pairs ...string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if !bytes.Contains(b, []byte(pairs[i])) {
			return fmt.Errorf("redirect %s: %q not found", filepath.Base(path), pairs[i])
		}
		b = bytes.ReplaceAll(b, []byte(pairs[i]), []byte(pairs[i+1]))
	}
	return os.WriteFile(path, b, 0o644)
}

// repoRoot is the root of this repository (the tests module's parent).
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(b), "module github.com/respire-go/respire\n") {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no github.com/respire-go/respire module above %s", wd)
}

// useAdapter makes the module at dir require the adapter and Respire from
// this repository.
func useAdapter(dir string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "mod", "edit",
		"-require", "github.com/respire-go/respire/goredis@v0.0.0",
		"-replace", "github.com/respire-go/respire/goredis="+filepath.Join(root, "goredis"),
		"-replace", "github.com/respire-go/respire="+root)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod edit: %w: %s", err, out)
	}
	return nil
}

// copyRedirect copies the files under redirect/ named in files (name in
// redirect/ -> name in dir) into dir.
func copyRedirect(dir string, files map[string]string) error {
	for from, to := range files {
		b, err := os.ReadFile(filepath.Join("redirect", from))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// buildTest compiles the test binary of the package in dir, with tags.
func buildTest(dir, out string, tags ...string) error {
	args := []string{"test", "-c", "-trimpath", "-o", out} // -trimpath: the build cache serves later runs from other temporary directories
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s in %s: %w: %s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// copyModule copies mod@version from the module cache into the work
// directory called name (workDir) and returns that directory.
func copyModule(t *testing.T, name, mod, version string) string {
	dir := workDir(t, name)
	src, err := moduleDir(mod, version)
	require.NoError(t, err)
	require.NoError(t, copyTree(src, dir))
	return dir
}

// buildFor builds the test binary bin of the package in pkgDir for client:
// "adapter" builds it with the respire_adapter tag, which puts the adapter
// in go-redis's place.
func buildFor(client, pkgDir, bin string) error {
	var tags []string
	if client == "adapter" {
		tags = []string{"respire_adapter"}
	}
	return buildTest(pkgDir, bin, tags...)
}
