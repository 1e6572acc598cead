package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// TestListingCurrent fails when api/*.txt does not match the API of the
// public packages: run make api and review the diff.
func TestListingCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every public package with go list")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("no public package found")
	}
	for _, want := range []string{"respire", "codec", "goredis", "respireotel", "respiretest"} {
		found := false
		for _, p := range pkgs {
			found = found || p.rel == want
		}
		if !found {
			t.Errorf("package %s is not listed", want)
		}
	}
	if err := checkFiles(root, listing(pkgs)); err != nil {
		t.Fatal(err)
	}
}

// kinds are the kinds -count sorts some lines of TestAPILines into.
var kinds = map[string]int{
	"pkg x, method (*Options) Shared()":                          kindPromoted,
	"pkg x, method (*Set[T]) Add(T)":                             kindMethod,
	"pkg x, type Hook interface, Before(string, ...any) error":   kindIfaceMethod,
	"pkg x, type Options struct, Promoted int":                   kindField,
	"pkg x, const Typed Kind = 2":                                kindConst,
	"pkg x, type Kind uint8":                                     kindType,
	"pkg x, func Connect(Options, <-chan int) (*Options, error)": kindFunc,
	"pkg x, var ErrX error":                                      kindVar,
}

// checkSource type-checks one file of package "example.com/x" (no imports
// but errors and time) and returns its listing.
func checkSource(t *testing.T, rel, src string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "zz_x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		return types.NewPackage(path, path), nil
	})}
	tp, err := conf.Check(rootModule+"/"+rel, fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range apiLines(&pkg{rel: rel, types: tp, fset: fset}) {
		if wantKind, ok := kinds[l.text]; ok && l.kind != wantKind {
			t.Errorf("%s: kind %s, want %s", l.text, kindNames[l.kind], kindNames[wantKind])
		}
		if !l.generated {
			t.Errorf("%s: declared in zz_x.go but not counted as generated", l.text)
		}
		out = append(out, l.text)
	}
	return out
}

func TestAPILines(t *testing.T) {
	got := checkSource(t, "x", `package x

const Untyped = 3
const Typed Kind = 2
const Name = "n"

type Kind uint8

func (Kind) String() string { return "" }

var ErrX error

type inner struct{ Promoted int; hidden int }

func (*inner) Shared() {}

type Options struct {
	inner
	Addr  string
	Dial  func(network, addr string) (int, error)
	Hooks []Hook
	local bool
}

type Hook interface {
	Before(name string, args ...any) error
	after()
}

type Set[T comparable] struct{ Items map[T]struct{} }

func (s *Set[T]) Add(v T) {}

func Map[T, U any](in []T, f func(T) U) []U { return nil }

type Number interface{ ~int | ~float64 }

type Alias = Options

func Connect(opts Options, ch <-chan int) (*Options, error) { return nil, nil }

func unexported() {}
`)
	want := []string{
		"pkg x, const Name = \"n\"",
		"pkg x, const Typed Kind = 2",
		"pkg x, const Untyped = 3",
		"pkg x, func Connect(Options, <-chan int) (*Options, error)",
		"pkg x, func Map[T any, U any]([]T, func(T) U) []U",
		"pkg x, method (*Options) Shared()",
		"pkg x, method (*Set[T]) Add(T)",
		"pkg x, method (Kind) String() string",
		"pkg x, type Alias = Options",
		"pkg x, type Hook interface { Before, unexported methods }",
		"pkg x, type Hook interface, Before(string, ...any) error",
		"pkg x, type Kind uint8",
		"pkg x, type Number interface {}",
		"pkg x, type Number interface, ~int | ~float64",
		"pkg x, type Options struct",
		"pkg x, type Options struct, Addr string",
		"pkg x, type Options struct, Dial func(string, string) (int, error)",
		"pkg x, type Options struct, Hooks []Hook",
		"pkg x, type Options struct, Promoted int",
		"pkg x, type Set[T comparable] struct",
		"pkg x, type Set[T comparable] struct, Items map[T]struct{}",
		"pkg x, var ErrX error",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiffListings(t *testing.T) {
	have := map[string][]byte{
		"a.txt":   []byte("pkg a, func F()\npkg a, func G()\n"),
		"old.txt": []byte("pkg old, func H()\n"),
	}
	want := map[string][]byte{
		"a.txt": []byte("pkg a, func F()\npkg a, func K()\n"),
		"b.txt": []byte("pkg b, var V int\n"),
	}
	err := diffListings(have, want)
	if err == nil {
		t.Fatal("no error for differing listings")
	}
	msg := err.Error()
	for _, s := range []string{
		"api/a.txt is stale: 1 lines added, 1 removed",
		"+ pkg a, func K()",
		"- pkg a, func G()",
		"api/b.txt is missing",
		"+ pkg b, var V int",
		"api/old.txt lists no public package any more",
		"- pkg old, func H()",
		"run make api",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("message lacks %q:\n%s", s, msg)
		}
	}
	if err := diffListings(want, want); err != nil {
		t.Errorf("equal listings: %v", err)
	}
}

func TestPublic(t *testing.T) {
	for path, want := range map[string]bool{
		rootModule + "/respire":            true,
		rootModule + "/codec/lz4":          true,
		rootModule + "/respireotel":        true,
		rootModule + "/internal/transport": false,
		rootModule + "/respire/internal/x": false,
		rootModule + "/gen":                false,
		"example.com/other":                false,
	} {
		if _, got := public(path, "x"); got != want {
			t.Errorf("public(%s) = %v, want %v", path, got, want)
		}
	}
	if _, ok := public(rootModule+"/cmd/demo", "main"); ok {
		t.Error("main package reported public")
	}
}
