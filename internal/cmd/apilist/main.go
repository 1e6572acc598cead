// Command apilist lists the exported API of every public package of
// Respire in checked-in files api/<name>.txt, one sorted line per exported
// identifier, in the manner of Go's own api/*.txt:
//
//	pkg respire, func Connect(context.Context, Options) (*Client, error)
//	pkg respire, method (*Client) Get(context.Context, string) (string, error)
//	pkg respire, type Options struct, Addr string
//
// A public package is one of the root module, goredis, respireotel or respiretest
// whose path has no internal element and which is not a main package.
// Files hold one top-level directory each: api/respire.txt, api/codec.txt
// (codec and its subpackages), api/respireotel.txt, api/respiretest.txt.
//
// Usage, from anywhere in the repository:
//
//	apilist          rewrite api/*.txt (same as -write)
//	apilist -check   fail, naming added and removed lines, when api/*.txt is stale
//	apilist -count   print per package counts of exported types, funcs, methods, ...
//
// "make api" runs apilist; "make vet" runs apilist -check.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

func main() {
	check := flag.Bool("check", false, "compare api/*.txt with the current API and fail when they differ")
	write := flag.Bool("write", false, "rewrite api/*.txt (the default)")
	count := flag.Bool("count", false, "print counts of exported identifiers per package")
	root := flag.String("root", "", "repository root (default: found from the current directory)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: apilist [-write | -check | -count] [-root dir]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	if *check && *write {
		fail(errors.New("-check and -write are exclusive"))
	}
	dir := *root
	if dir == "" {
		var err error
		if dir, err = findRoot(); err != nil {
			fail(err)
		}
	}
	pkgs, err := load(dir)
	if err != nil {
		fail(err)
	}
	switch {
	case *count:
		printCounts(os.Stdout, pkgs)
	case *check:
		if err := checkFiles(dir, listing(pkgs)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		if err := writeFiles(dir, listing(pkgs)); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "apilist:", err)
	os.Exit(2)
}

// findRoot walks up from the current directory to the root module's.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(data) == rootModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s in the current directory or above", rootModule)
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// listing returns the contents of every api/*.txt file by file name.
func listing(pkgs []*pkg) map[string][]byte {
	files := make(map[string][]string)
	for _, p := range pkgs {
		name := strings.SplitN(p.rel, "/", 2)[0] + ".txt"
		for _, l := range apiLines(p) {
			files[name] = append(files[name], l.text)
		}
	}
	out := make(map[string][]byte, len(files))
	for name, lines := range files {
		sort.Strings(lines)
		out[name] = []byte(strings.Join(lines, "\n") + "\n")
	}
	return out
}

func apiDir(root string) string { return filepath.Join(root, "api") }

// writeFiles writes want to api/ and removes the api/*.txt files it lacks.
func writeFiles(root string, want map[string][]byte) error {
	dir := apiDir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	have, err := readFiles(root)
	if err != nil {
		return err
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, data := range want {
		if bytes.Equal(have[name], data) {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readFiles returns the checked-in api/*.txt files by name.
func readFiles(root string) (map[string][]byte, error) {
	names, err := filepath.Glob(filepath.Join(apiDir(root), "*.txt"))
	if err != nil {
		return nil, err
	}
	have := make(map[string][]byte, len(names))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		have[filepath.Base(n)] = data
	}
	return have, nil
}

// maxShown bounds the lines -check prints per file and direction.
const maxShown = 40

// checkFiles compares the checked-in api/*.txt with want and returns an
// error naming the added and removed lines of every stale file.
func checkFiles(root string, want map[string][]byte) error {
	have, err := readFiles(root)
	if err != nil {
		return err
	}
	return diffListings(have, want)
}

func diffListings(have, want map[string][]byte) error {
	names := make(map[string]bool)
	for n := range have {
		names[n] = true
	}
	for n := range want {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, n := range sorted {
		if bytes.Equal(have[n], want[n]) {
			continue
		}
		added, removed := diffLines(splitLines(have[n]), splitLines(want[n]))
		switch {
		case have[n] == nil:
			fmt.Fprintf(&b, "api/%s is missing; it would hold %d lines\n", n, len(added))
		case want[n] == nil:
			fmt.Fprintf(&b, "api/%s lists no public package any more\n", n)
		default:
			fmt.Fprintf(&b, "api/%s is stale: %d lines added, %d removed\n", n, len(added), len(removed))
		}
		show(&b, "+ ", added)
		show(&b, "- ", removed)
	}
	if b.Len() == 0 {
		return nil
	}
	b.WriteString("The public API differs from api/*.txt: run make api and review the diff.")
	return errors.New(b.String())
}

func show(w io.Writer, prefix string, lines []string) {
	for i, l := range lines {
		if i == maxShown {
			fmt.Fprintf(w, "%s... and %d more\n", prefix, len(lines)-maxShown)
			return
		}
		fmt.Fprintf(w, "%s%s\n", prefix, l)
	}
}

func splitLines(data []byte) []string {
	s := strings.TrimRight(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// diffLines returns the lines of want not in have (added) and of have not
// in want (removed), each in order.
func diffLines(have, want []string) (added, removed []string) {
	inHave := make(map[string]bool, len(have))
	for _, l := range have {
		inHave[l] = true
	}
	inWant := make(map[string]bool, len(want))
	for _, l := range want {
		inWant[l] = true
		if !inHave[l] {
			added = append(added, l)
		}
	}
	for _, l := range have {
		if !inWant[l] {
			removed = append(removed, l)
		}
	}
	return added, removed
}

// printCounts prints, per package, how many exported identifiers of each
// kind it has, with those declared in generated files (zz_*.go) in
// parentheses.
func printCounts(w io.Writer, pkgs []*pkg) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "package\t")
	for _, k := range kindNames {
		fmt.Fprintf(tw, "%s\t", k)
	}
	fmt.Fprintln(tw, "lines\t")
	var total [numKinds][2]int
	row := func(name string, c [numKinds][2]int) {
		fmt.Fprintf(tw, "%s\t", name)
		sum := 0
		for _, n := range c {
			sum += n[0]
			if n[1] > 0 {
				fmt.Fprintf(tw, "%d (%d zz)\t", n[0], n[1])
			} else {
				fmt.Fprintf(tw, "%d\t", n[0])
			}
		}
		fmt.Fprintf(tw, "%d\t\n", sum)
	}
	for _, p := range pkgs {
		var c [numKinds][2]int
		for _, l := range apiLines(p) {
			c[l.kind][0]++
			total[l.kind][0]++
			if l.generated {
				c[l.kind][1]++
				total[l.kind][1]++
			}
		}
		row(p.rel, c)
	}
	row("total", total)
	tw.Flush()
	fmt.Fprintln(w, "(N zz): of which declared in generated files, zz_*.go; promoted: methods reached through an embedded field")
}
