package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/respire-go/respire/gen"
	"github.com/respire-go/respire/gen/spec"
)

// runGen implements "respgen gen": write respire/zz_*.go from the spec and
// the reply notation.
func runGen(args []string) error {
	fs := flag.NewFlagSet("respgen gen", flag.ContinueOnError)
	specPath := fs.String("spec", filepath.Join("spec", "commands.json"), "the command spec `file`")
	repliesPath := fs.String("replies", filepath.Join("spec", "replies.txt"), "the reply notation `file`")
	out := fs.String("out", "respire", "output `directory`")
	supplementPath := fs.String("supplement", "", "our `file` of facts the servers' COMMAND DOCS lack (spec/supplement.json); none when empty")
	allowMissing := fs.Bool("allow-missing", false, "skip commands without a reply entry (for bringing up a new spec; never commit its output)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: respgen gen --spec spec/commands.json --replies spec/replies.txt --out respire/\n\n"+
			"Writes the zz_*.go files of package respire (and zz_excluded.md). Every\n"+
			"command of the spec needs an entry in the replies file (spec/REPLIES.md).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gen: unexpected arguments %q", fs.Args())
	}
	s, err := spec.Load(*specPath)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	r, err := gen.LoadReplies(*repliesPath)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	var sup *gen.Supplement
	if *supplementPath != "" {
		if sup, err = gen.LoadSupplement(*supplementPath); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	o, err := gen.Generate(gen.Config{Spec: s, Replies: r, Supplement: sup, AllowMissing: *allowMissing})
	if err != nil {
		var missing *gen.MissingError
		if errors.As(err, &missing) {
			return fmt.Errorf("gen: %w\n(run with --allow-missing to generate the others meanwhile)", err)
		}
		return fmt.Errorf("gen: %w", err)
	}
	for _, n := range o.Notes {
		fmt.Fprintf(os.Stderr, "respgen gen: note: %s\n", n)
	}
	for _, c := range o.Skipped {
		fmt.Fprintf(os.Stderr, "respgen gen: skipped %s: no reply entry\n", c)
	}
	if err := writeOutput(*out, o.Files); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	fmt.Fprintf(os.Stderr, "respgen gen: wrote %d files to %s: %d methods, %d types\n", len(o.Files), *out, o.Methods, o.Types)
	return nil
}

// writeOutput writes files into dir and removes zz_ files it no longer
// generates. Unchanged files are not rewritten.
func writeOutput(dir string, files map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(dir, "zz_*"))
	if err != nil {
		return err
	}
	for _, p := range old {
		base := filepath.Base(p)
		if _, ok := files[base]; !ok && !strings.HasSuffix(base, "_test.go") {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if cur, err := os.ReadFile(p); err == nil && string(cur) == string(files[n]) {
			continue
		}
		if err := writeFileAtomic(p, files[n]); err != nil {
			return err
		}
	}
	return nil
}
