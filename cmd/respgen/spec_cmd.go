package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/respire-go/respire/gen/spec"
)

// addrList collects repeated --addr flags.
type addrList []string

func (a *addrList) String() string     { return strings.Join(*a, ",") }
func (a *addrList) Set(s string) error { *a = append(*a, s); return nil }

// runSpec implements "respgen spec": dump the command tables of live
// servers, merge them and write the spec file.
func runSpec(args []string) error {
	fs := flag.NewFlagSet("respgen spec", flag.ContinueOnError)
	var addrs addrList
	fs.Var(&addrs, "addr", "`host:port` of a Redis or Valkey server to dump (repeat for several)")
	out := fs.String("out", filepath.Join("spec", "commands.json"), "`file` to write")
	timeout := fs.Duration("timeout", 30*time.Second, "time allowed for each server")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: respgen spec --addr HOST:PORT [--addr HOST:PORT ...] [--out FILE]\n\n"+
			"Dumps COMMAND DOCS and COMMAND INFO of every server, merges the dumps\n"+
			"(the newest server wins where they differ, see gen/spec.Merge) and\n"+
			"writes the normalized spec.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("spec: unexpected arguments %q", fs.Args())
	}
	if len(addrs) == 0 {
		fs.Usage()
		return errors.New("spec: at least one --addr is required")
	}

	ctx := context.Background()
	type server struct {
		addr string
		spec.Server
	}
	servers := make([]server, 0, len(addrs))
	for _, addr := range addrs {
		s, err := withTimeout(ctx, *timeout, func(ctx context.Context) (spec.Server, error) {
			return spec.Identify(ctx, addr)
		})
		if err != nil {
			return fmt.Errorf("spec: %s: %w", addr, err)
		}
		for _, prev := range servers {
			if prev.ID == s.ID {
				return fmt.Errorf("spec: %s and %s are both %s", prev.addr, addr, s.ID)
			}
		}
		servers = append(servers, server{addr, s})
	}
	// Merge wants the oldest first; the order of the flags does not matter.
	slices.SortFunc(servers, func(a, b server) int { return spec.CompareForMerge(a.Server, b.Server) })

	dumps := make([]*spec.Spec, 0, len(servers))
	for _, s := range servers {
		d, err := withTimeout(ctx, *timeout, func(ctx context.Context) (*spec.Spec, error) {
			return spec.Dump(ctx, s.addr, s.ID)
		})
		if err != nil {
			return fmt.Errorf("spec: %s (%s): %w", s.addr, s.ID, err)
		}
		fmt.Fprintf(os.Stderr, "respgen spec: %s: %s, %d commands and subcommands\n", s.addr, s.ID, len(d.Commands))
		dumps = append(dumps, d)
	}

	merged := spec.Merge(dumps...)
	data, err := merged.Marshal()
	if err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if err := writeFileAtomic(*out, data); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	fmt.Fprintf(os.Stderr, "respgen spec: wrote %s: %d commands and subcommands from %s\n",
		*out, len(merged.Commands), strings.Join(merged.Servers, ", "))
	return nil
}

func withTimeout[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return f(ctx)
}

// writeFileAtomic replaces path with data, so that an interrupted run
// never leaves half a spec behind.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".spec-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
