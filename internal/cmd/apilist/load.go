package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// rootModule is the import path of the root module; listed packages are
// named by their path relative to it ("respire", "codec/lz4", "respireotel").
const rootModule = "github.com/respire-go/respire"

// modules are the directories, relative to the repository root, of the
// modules whose packages are public. tests/ and benchmarks/ are not.
var modules = []string{".", "goredis", "respireotel", "respiretest"}

// excluded are public-looking packages left out of the listing: gen and
// gen/spec are the command generator behind cmd/respgen, with no contract
// for users; they belong under internal/. Drop them from this list if they
// stay where they are and should be held as API.
var excluded = map[string]bool{
	"gen":      true,
	"gen/spec": true,
}

// listedPackage is one entry of "go list -json".
type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Export     string
	ImportMap  map[string]string
	DepOnly    bool
	Error      *struct{ Err string }
}

// pkg is one type-checked public package.
type pkg struct {
	rel   string // path relative to rootModule, "respire"
	types *types.Package
	fset  *token.FileSet
}

// public reports whether the package at import path p, named name, is part
// of the public API, and returns its path relative to the root module.
func public(p, name string) (string, bool) {
	if name == "main" {
		return "", false
	}
	rel, ok := strings.CutPrefix(p, rootModule+"/")
	if !ok {
		return "", false
	}
	for _, el := range strings.Split(rel, "/") {
		if el == "internal" || el == "testdata" {
			return "", false
		}
	}
	if excluded[rel] {
		return "", false
	}
	return rel, true
}

// load type-checks every public package of every module under root and
// returns them sorted by path.
func load(root string) ([]*pkg, error) {
	var all []*pkg
	for _, m := range modules {
		ps, err := loadModule(filepath.Join(root, m))
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", m, err)
		}
		all = append(all, ps...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].rel < all[j].rel })
	return all, nil
}

// goList runs "go list -export -deps -json" in dir and returns the packages.
func goList(dir string) ([]*listedPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps",
		"-json=ImportPath,Name,Dir,GoFiles,CgoFiles,Export,ImportMap,DepOnly,Error", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var ps []*listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listedPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func loadModule(dir string) ([]*pkg, error) {
	listed, err := goList(dir)
	if err != nil {
		return nil, err
	}
	exports := make(map[string]string)
	for _, p := range listed {
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
	}
	var out []*pkg
	for _, p := range listed {
		if p.DepOnly {
			continue
		}
		rel, ok := public(p.ImportPath, p.Name)
		if !ok {
			continue
		}
		tp, fset, err := check(p, exports)
		if err != nil {
			return nil, fmt.Errorf("package %s: %w", p.ImportPath, err)
		}
		out = append(out, &pkg{rel: rel, types: tp, fset: fset})
	}
	return out, nil
}

// check type-checks p from its source, importing its dependencies from the
// export data that go list built.
func check(p *listedPackage, exports map[string]string) (*types.Package, *token.FileSet, error) {
	if len(p.CgoFiles) > 0 {
		return nil, nil, errors.New("cgo packages are not supported")
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
	imp := importer.ForCompiler(fset, "gc", lookup)
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if mapped, ok := p.ImportMap[path]; ok {
				path = mapped
			}
			return imp.Import(path)
		}),
	}
	tp, err := conf.Check(p.ImportPath, fset, files, nil)
	if err != nil {
		return nil, nil, err
	}
	return tp, fset, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
