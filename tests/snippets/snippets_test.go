// Package snippets checks that the Go code in the repository's Markdown
// compiles, so that a README or docs/ example cannot rot unnoticed.
//
// Extraction rules, for README.md and every docs/*.md:
//
//   - A fenced block whose info string is exactly "go" (```go) is compiled.
//     Any other block (```text, ```sh, a bare ```) is not. Write ```text for
//     Go-like pseudo code that is not meant to compile.
//   - A block that starts with a package clause is a complete file and is
//     compiled as it is, in a package of its own.
//   - A block that parses as a sequence of statements becomes the body of a
//     function returning error (in a block of its own, so that it may
//     declare its own c or err with :=), with these names in scope, so that
//     a snippet can use them without declaring them:
//     ctx context.Context, c *respire.Client, rdb *redis.Client (go-redis),
//     client rueidis.Client, addr string, buf []byte.
//     A body that does not end in a return or an endless for loop gets
//     "return nil". Variables a snippet declares with := and never reads
//     are fine: a use of each ("_ = v") is added on the same line.
//   - Any other block without a package clause, holding a declaration at
//     column 0 (func, type, var, const, import), is a file without its
//     header: it gets a package clause and the imports it needs.
//   - Imports are added for the packages a snippet names (respire, codec,
//     typed, redis, rueidis and common standard packages); a complete file
//     brings its own.
//   - Every block is vetted (go vet, which type-checks), with errors
//     reported at the Markdown file and line of the snippet.
//
// The snippets are built in a throwaway module that uses this repository
// through replace directives and takes the peers' versions (go-redis,
// rueidis) from benchmarks/go.mod, so that side-by-side comparisons in docs/
// compile too.
package snippets

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// block is one ```go block of a Markdown file.
type block struct {
	file string // relative to the repository root, e.g. "docs/cluster.md"
	line int    // line of the block's first code line
	code string
}

// knownImports are the packages a snippet may name without importing them.
var knownImports = map[string]string{
	"context": "context",
	"errors":  "errors",
	"fmt":     "fmt",
	"time":    "time",
	"strconv": "strconv",
	"strings": "strings",
	"os":      "os",
	"log":     "log",
	"slog":    "log/slog",
	"tls":     "crypto/tls",
	"x509":    "crypto/x509",
	"json":    "encoding/json",
	"sync":    "sync",
	"net":     "net",
	"testing": "testing",
	"respire": "github.com/respire-go/respire/respire",
	"codec":   "github.com/respire-go/respire/codec",
	"typed":   "github.com/respire-go/respire/codec/typed",
	"resp":    "github.com/respire-go/respire/internal/transport/resp",
	"redis":   "github.com/redis/go-redis/v9",
	"rueidis": "github.com/redis/rueidis",
}

// givens are in scope of a statement snippet; the signature needs these
// imports.
const givens = "ctx context.Context, c *respire.Client, rdb *redis.Client, client rueidis.Client, addr string, buf []byte"

var givenImports = []string{"context", "respire", "redis", "rueidis"}

func TestSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every snippet with the go command")
	}
	root := repoRoot(t)
	blocks := extract(t, root)
	if len(blocks) == 0 {
		t.Fatal("no ```go blocks found: the extraction is broken")
	}
	dir := t.TempDir()
	writeModule(t, root, dir)
	for i, b := range blocks {
		src, shared, err := wrap(b, i)
		if err != nil {
			t.Errorf("%s:%d: %v", b.file, b.line, err)
			continue
		}
		// Statement snippets share one package (one function each), which
		// builds much faster than a package per block; files and
		// declarations get a package of their own.
		pkg := filepath.Join(dir, "stmts")
		if !shared {
			pkg = filepath.Join(dir, fmt.Sprintf("b%03d", i))
		}
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, fmt.Sprintf("b%03d.go", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// go build with -e lists every compile error of a snippet; go vet then
	// adds its checks.
	for _, args := range [][]string{{"build", "-gcflags=-e", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: snippets of README.md or docs/*.md do not compile:\n%s", args[0], out)
		}
	}
	t.Logf("%d snippets compile", len(blocks))
}

// repoRoot is the nearest directory above the working directory holding
// the root module's go.mod.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.HasPrefix(b, []byte("module github.com/respire-go/respire\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root (go.mod of github.com/respire-go/respire) not found")
		}
		dir = parent
	}
}

// extract returns the ```go blocks of README.md and docs/*.md.
func extract(t *testing.T, root string) []block {
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	for _, d := range docs {
		files = append(files, filepath.ToSlash(mustRel(t, root, d)))
	}
	var blocks []block
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, parseBlocks(t, f, data)...)
	}
	return blocks
}

func mustRel(t *testing.T, root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// parseBlocks splits Markdown into its ```go blocks. Fences may be indented
// (inside a list item); the indentation of the fence is removed from the
// block's lines.
func parseBlocks(t *testing.T, file string, data []byte) []block {
	var blocks []block
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	var cur *block
	var indent, fence string
	var lines []string
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil {
			if strings.HasPrefix(trimmed, "```") {
				fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
				info := strings.TrimSpace(trimmed[len(fence):])
				indent = line[:len(line)-len(trimmed)]
				cur = &block{file: file, line: n + 1}
				if info != "go" {
					cur.file = "" // a block that is skipped
				}
				lines = lines[:0]
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, "`")) == "" {
			if cur.file != "" {
				cur.code = strings.Join(lines, "\n") + "\n"
				blocks = append(blocks, *cur)
			}
			cur = nil
			continue
		}
		lines = append(lines, strings.TrimPrefix(line, indent))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("%s:%d: code block never closed", file, cur.line-1)
	}
	return blocks
}

var (
	packageClause = regexp.MustCompile(`(?m)^package \w+`)
	topLevelDecl  = regexp.MustCompile(`(?m)^(func|type|var|const|import)\b`)
)

// wrap turns block number i into a Go file, as the package comment
// describes; shared says that it goes into the package of statement
// snippets.
func wrap(b block, i int) (src string, shared bool, err error) {
	directive := fmt.Sprintf("//line %s:%d\n", b.file, b.line)
	if packageClause.MatchString(b.code) {
		return directive + b.code, false, nil
	}
	if _, _, _, err := parseBody(b.code); err != nil && topLevelDecl.MatchString(b.code) {
		return "package snippet\n\n" + imports("package snippet\n"+b.code, nil) + directive + b.code, false, nil
	}
	body := b.code
	if !endsInReturn(body) {
		body += "return nil\n"
	}
	body, err = useDefined(body)
	if err != nil {
		return "", false, err
	}
	// The inner block lets a snippet declare its own c or err with :=.
	fn := fmt.Sprintf("func snippet%03d(%s) error {\n{\n%s%s}\n}\n", i, givens, directive, body)
	return "package stmts\n\n" + imports("package stmts\n"+fn, givenImports) + fn, true, nil
}

// imports returns an import declaration for the known packages that file
// (a Go file without imports) names as pkg.Name, and for always.
func imports(file string, always []string) string {
	names := map[string]bool{}
	for _, a := range always {
		names[a] = true
	}
	if f, err := parser.ParseFile(token.NewFileSet(), "", file, parser.SkipObjectResolution); err == nil {
		// A name the snippet declares (a loop variable called resp, say)
		// is not a package.
		declared := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					for _, l := range n.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							declared[id.Name] = true
						}
					}
				}
			case *ast.RangeStmt:
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			case *ast.Field:
				for _, id := range n.Names {
					declared[id.Name] = true
				}
			case *ast.ValueSpec:
				for _, id := range n.Names {
					declared[id.Name] = true
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && knownImports[id.Name] != "" && !declared[id.Name] {
					names[id.Name] = true
				}
			}
			return true
		})
	}
	var paths []string
	for name := range names {
		paths = append(paths, fmt.Sprintf("\t%q\n", knownImports[name]))
	}
	sort.Strings(paths)
	return "import (\n" + strings.Join(paths, "") + ")\n\n"
}

// parseBody parses statements as the body of a function.
func parseBody(body string) (*token.FileSet, *ast.FuncDecl, int, error) {
	const head = "package p\nfunc f() error {\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", head+body+"}\n", parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, 0, err
	}
	return fset, f.Decls[0].(*ast.FuncDecl), len(head), nil
}

// endsInReturn reports whether body ends in a return or an endless loop,
// after which a return would be unreachable.
func endsInReturn(body string) bool {
	_, fn, _, err := parseBody(body)
	if err != nil || len(fn.Body.List) == 0 {
		return false
	}
	switch s := fn.Body.List[len(fn.Body.List)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.ForStmt:
		return s.Cond == nil
	}
	return false
}

// useDefined adds "; _ = v" after every statement of a block that defines
// v with :=, on the statement's own line, so that a snippet may declare
// results it does not read (v, err := c.Get(...)) and line numbers stay.
func useDefined(body string) (string, error) {
	fset, fn, head, err := parseBody(body)
	if err != nil {
		return "", fmt.Errorf("not valid Go statements: %w", err)
	}
	type insert struct {
		at   int
		text string
	}
	var ins []insert
	visit := func(list []ast.Stmt) {
		for _, s := range list {
			as, ok := s.(*ast.AssignStmt)
			if !ok || as.Tok != token.DEFINE {
				continue
			}
			var uses []string
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
					uses = append(uses, "_ = "+id.Name)
				}
			}
			if len(uses) > 0 {
				ins = append(ins, insert{fset.Position(as.End()).Offset - head, "; " + strings.Join(uses, "; ")})
			}
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			visit(n.List)
		case *ast.CaseClause:
			visit(n.Body)
		case *ast.CommClause:
			visit(n.Body)
		}
		return true
	})
	sort.Slice(ins, func(i, j int) bool { return ins[i].at > ins[j].at })
	for _, in := range ins {
		body = body[:in.at] + in.text + body[in.at:]
	}
	return body, nil
}

// writeModule writes the go.mod and go.sum of the throwaway module: the
// requirements of benchmarks/go.mod (respire, its test module and the
// peers), with the replace directives pointing at this repository.
func writeModule(t *testing.T, root, dir string) {
	mod, err := os.ReadFile(filepath.Join(root, "benchmarks", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(mod), "module github.com/respire-go/respire/benchmarks", "module snippets", 1)
	s = strings.ReplaceAll(s, "=> ../tests", "=> "+filepath.Join(root, "tests"))
	s = strings.ReplaceAll(s, "=> ../", "=> "+root+string(filepath.Separator))
	if strings.Contains(s, "=> ../") || !strings.Contains(s, "module snippets") {
		t.Fatalf("benchmarks/go.mod has an unexpected shape:\n%s", mod)
	}
	sum, err := os.ReadFile(filepath.Join(root, "benchmarks", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
}
