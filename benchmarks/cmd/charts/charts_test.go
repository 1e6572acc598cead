package main

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCharts writes sweep JSON as the load tool would, runs the tool and
// checks that every chart is well-formed SVG with a line per client, and
// that the tables carry the figures and ratios.
func TestCharts(t *testing.T) {
	dir := t.TempDir()
	cell := func(client, shape string, ops, cpu float64) map[string]any {
		return map[string]any{"client": client, "shape": shape, "median": map[string]any{
			"ops_per_sec": ops, "p50_us": 30, "p99_us": 90, "cpu_us_per_op": cpu, "allocs_per_op": 1.5}}
	}
	write := func(name string, masters int, cells ...map[string]any) {
		meta := map[string]any{"started": time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), "go_version": "go1.26", "gomaxprocs": 2, "num_cpu": 2,
			"server": "redis-8.0 8.0.2", "duration_per_cell": "1s", "rounds": 3, "clients": []string{"respire-nofiller", "rueidis"},
			"cpu": "Test CPU", "cluster_masters": masters}
		b, err := json.Marshal(map[string]any{"meta": meta, "cells": cells})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("callers.json", 0,
		cell("respire-nofiller", "callers-get-1k-x1", 40e3, 20), cell("rueidis", "callers-get-1k-x1", 20e3, 25),
		cell("respire-nofiller", "callers-get-1k-x64", 400e3, 2), cell("rueidis", "callers-get-1k-x64", 200e3, 4),
		cell("rueidis", "cluster-get-1k-x64", 1, 1)) // not a callers point
	write("values.json", 0,
		cell("respire-nofiller", "value-get-16-x1", 40e3, 20), cell("rueidis", "value-get-16-x1", 30e3, 20),
		cell("respire-nofiller", "value-set-1048576-x16", 500, 900), cell("rueidis", "value-set-1048576-x16", 400, 1000))
	write("batch.json", 0,
		cell("respire-nofiller", "batch-get-1k-b10-x4", 400e3, 2), cell("rueidis", "batch-get-1k-b10-x4", 300e3, 3),
		cell("respire-nofiller", "batch-get-1k-b10000-x4", 500e3, 1), cell("rueidis", "batch-get-1k-b10000-x4", 600e3, 1))
	write("cluster-3.json", 3, cell("respire-nofiller", "cluster-get-1k-x64", 200e3, 3), cell("rueidis", "cluster-get-1k-x64", 100e3, 6))
	write("cluster-6.json", 6, cell("respire-nofiller", "cluster-get-1k-x64", 180e3, 3), cell("rueidis", "cluster-get-1k-x64", 90e3, 6))

	var md strings.Builder
	if err := run(dir, &md); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"callers", "values", "batch", "cluster"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(strings.NewReader(string(b)))
		lines := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s.svg is not well-formed: %v", name, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
				lines++
			}
		}
		if lines == 0 {
			t.Errorf("%s.svg has no lines", name)
		}
		for _, want := range []string{"Test CPU", "2026-12-02", "respire-nofiller", "rueidis", "(log scale)"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s.svg lacks %q", name, want)
			}
		}
	}
	for _, want := range []string{
		"| 64 | 400k | 200k | 2.00 |",   // callers ops/s, ratio
		"| 64 | 2 | 4 | 0.50 |",         // callers CPU, lower is better
		"| 16 B | 0.64 | 0.48 | 1.33 |", // GET of 16 B: MB/s
		"| 10k | 500k | 600k | 0.83 |",  // batches of 10,000
		"| 6 | 180k | 90k | 2.00 |",     // six primaries
		"| 1 MiB | 524 | 419 | 1.25 |",  // SET of 1 MiB, 16 callers, MB/s
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, md.String())
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| 64 | 400k | 2.00 (rueidis) | 2 | 0.50 (rueidis) |"; !strings.Contains(string(sum), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum)
	}
	if strings.Contains(md.String(), "| 64 | – | 1 |") {
		t.Error("the cluster shape of callers.json was taken as a callers point")
	}
}

func TestLabels(t *testing.T) {
	for x, want := range map[float64]string{16: "16 B", 1024: "1 KiB", 131072: "128 KiB", 1 << 20: "1 MiB"} {
		if got := sizeLabel(x); got != want {
			t.Errorf("sizeLabel(%v) = %q, want %q", x, got, want)
		}
	}
	for x, want := range map[float64]string{10000: "10k", 1.5e6: "1.5M", 2.5: "2.5", 0.25: "0.25", 640: "640"} {
		if got := siLabel(x); got != want {
			t.Errorf("siLabel(%v) = %q, want %q", x, got, want)
		}
	}
}
