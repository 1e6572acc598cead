// Command charts turns the load tool's JSON of the issue 26 sweeps (how cost
// grows with callers, value size, batch size and cluster nodes) into one SVG
// chart per dimension and Markdown tables of the figures behind them.
//
//	cd benchmarks
//	go run ./cmd/charts -dir ../docs/bench/round4 > ../docs/bench/round4/tables.md
//
// It reads callers.json, values.json, batch.json and cluster-*.json from
// -dir (whichever exist) and writes callers.svg, values.svg, batch.svg and
// cluster.svg beside them, and summary.md: Respire's figures and its ratio
// to the best peer at every point. The full tables go to stdout. The
// standard library only.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	dir := flag.String("dir", ".", "directory holding the sweeps' JSON; the SVGs are written there too")
	flag.Parse()
	if err := run(*dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "charts:", err)
		os.Exit(1)
	}
}

// report is the part of the load tool's JSON the charts use.
type report struct {
	Meta struct {
		Started        time.Time `json:"started"`
		GoVersion      string    `json:"go_version"`
		GOMAXPROCS     int       `json:"gomaxprocs"`
		NumCPU         int       `json:"num_cpu"`
		Server         string    `json:"server"`
		Duration       string    `json:"duration_per_cell"`
		Rounds         int       `json:"rounds"`
		Clients        []string  `json:"clients"`
		LoadAverage    string    `json:"load_average"`
		CPU            string    `json:"cpu"`
		ClusterMasters int       `json:"cluster_masters"`
	} `json:"meta"`
	Cells []struct {
		Client string  `json:"client"`
		Shape  string  `json:"shape"`
		Median measure `json:"median"`
		Error  string  `json:"error"`
	} `json:"cells"`
}

type measure struct {
	OpsPerSec  float64 `json:"ops_per_sec"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	CPUusPerOp float64 `json:"cpu_us_per_op"`
	AllocsOp   float64 `json:"allocs_per_op"`
	BytesOp    float64 `json:"bytes_per_op"`
}

func readReport(path string) (*report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// note says where and when a report was measured.
func note(r *report) string {
	m := r.Meta
	s := fmt.Sprintf("Measured %s on %s, %d CPUs (GOMAXPROCS %d), %s, %s; %d rounds × %s per point, clients interleaved, medians",
		m.Started.Format("2006-01-02"), orDefault(m.CPU, "an unnamed CPU"), m.NumCPU, m.GOMAXPROCS, m.GoVersion, m.Server, m.Rounds, m.Duration)
	if m.LoadAverage != "" {
		s += "; load average at start " + m.LoadAverage
	}
	return s + "."
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// metric is one quantity a panel plots.
type metric struct {
	Name  string
	Unit  string
	Get   func(m measure, x float64) float64 // x: the point's coordinate (value size for MB/s)
	Lower bool                               // lower is better
}

var (
	opsPerSec = metric{Name: "ops/s", Unit: "ops/s", Get: func(m measure, _ float64) float64 { return m.OpsPerSec }}
	cmdsPerS  = metric{Name: "commands/s", Unit: "commands/s", Get: func(m measure, _ float64) float64 { return m.OpsPerSec }}
	cpuPerOp  = metric{Name: "client CPU µs/op", Unit: "µs", Get: func(m measure, _ float64) float64 { return m.CPUusPerOp }, Lower: true}
	cpuPerCmd = metric{Name: "client CPU µs/command", Unit: "µs", Get: func(m measure, _ float64) float64 { return m.CPUusPerOp }, Lower: true}
	p50       = metric{Name: "p50 latency µs", Unit: "µs", Get: func(m measure, _ float64) float64 { return m.P50us }, Lower: true}
	p99       = metric{Name: "p99 latency µs", Unit: "µs", Get: func(m measure, _ float64) float64 { return m.P99us }, Lower: true}
	mbPerS    = metric{Name: "MB/s", Unit: "MB/s", Get: func(m measure, x float64) float64 { return m.OpsPerSec * x / 1e6 }}
	allocsCmd = metric{Name: "allocations/command", Unit: "allocs", Get: func(m measure, _ float64) float64 { return m.AllocsOp }, Lower: true}
)

// point is one client's measurement at one x.
type point struct {
	client string
	x      float64
	m      measure
}

// dimension is one sweep: its points, grouped into panels.
type dimension struct {
	name   string // file stem of the SVG
	title  string
	xLabel string
	xFmt   func(float64) string
	groups []group
	note   string
	order  []string // clients, in the report's order
}

// group is a set of points of one kind (GET from one caller, batches
// from four goroutines, ...) plotted for several metrics.
type group struct {
	label   string
	metrics []metric
	points  []point
}

func run(dir string, out io.Writer) error {
	var dims []*dimension
	if r, err := readReport(filepath.Join(dir, "callers.json")); err == nil {
		dims = append(dims, callersDim(r))
	} else if !os.IsNotExist(err) {
		return err
	}
	if r, err := readReport(filepath.Join(dir, "values.json")); err == nil {
		dims = append(dims, valuesDim(r))
	} else if !os.IsNotExist(err) {
		return err
	}
	if r, err := readReport(filepath.Join(dir, "batch.json")); err == nil {
		dims = append(dims, batchDim(r))
	} else if !os.IsNotExist(err) {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "cluster-*.json"))
	if err != nil {
		return err
	}
	if len(files) > 0 {
		var rs []*report
		for _, f := range files {
			r, err := readReport(f)
			if err != nil {
				return err
			}
			rs = append(rs, r)
		}
		dims = append(dims, clusterDim(rs))
	}
	if len(dims) == 0 {
		return fmt.Errorf("no sweep JSON in %s (callers.json, values.json, batch.json, cluster-*.json)", dir)
	}
	for _, d := range dims {
		path := filepath.Join(dir, d.name+".svg")
		if err := os.WriteFile(path, []byte(d.svg()), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "wrote", path)
		d.markdown(out)
	}
	var sum strings.Builder
	for _, d := range dims {
		d.summary(&sum)
	}
	path := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(path, []byte(sum.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", path)
	return nil
}

// cellsOf returns the report's cells whose shape parse accepts, as points
// grouped by the key parse returns.
func cellsOf(r *report, parse func(shape string) (key string, x float64, ok bool)) map[string][]point {
	g := map[string][]point{}
	for _, c := range r.Cells {
		if c.Error != "" {
			continue
		}
		if key, x, ok := parse(c.Shape); ok {
			g[key] = append(g[key], point{client: c.Client, x: x, m: c.Median})
		}
	}
	return g
}

func callersDim(r *report) *dimension {
	g := cellsOf(r, func(s string) (string, float64, bool) {
		rest, ok := strings.CutPrefix(s, "callers-get-1k-x")
		if !ok {
			return "", 0, false
		}
		n, err := strconv.Atoi(rest)
		return "get", float64(n), err == nil
	})
	return &dimension{
		name: "callers", title: "GET of 1 KiB, one server: cost as callers grow", xLabel: "goroutines sharing one client",
		xFmt:   func(x float64) string { return strconv.Itoa(int(x)) },
		groups: []group{{label: "GET 1 KiB", metrics: []metric{opsPerSec, cpuPerOp, p50, p99}, points: g["get"]}},
		note:   note(r), order: r.Meta.Clients,
	}
}

func valuesDim(r *report) *dimension {
	g := cellsOf(r, func(s string) (string, float64, bool) {
		rest, ok := strings.CutPrefix(s, "value-")
		if !ok {
			return "", 0, false
		}
		f := strings.Split(rest, "-") // get, SIZE, xN
		if len(f) != 3 {
			return "", 0, false
		}
		size, err := strconv.Atoi(f[1])
		if err != nil {
			return "", 0, false
		}
		return strings.ToUpper(f[0]) + " " + f[2], float64(size), true
	})
	d := &dimension{
		name: "values", title: "GET and SET, one server: cost as values grow", xLabel: "value size",
		xFmt: sizeLabel, note: note(r), order: r.Meta.Clients,
	}
	for _, k := range []string{"GET x1", "GET x16", "SET x1", "SET x16"} {
		callers := "1 caller"
		if strings.HasSuffix(k, "x16") {
			callers = "16 callers"
		}
		d.groups = append(d.groups, group{label: k[:3] + ", " + callers, metrics: []metric{mbPerS, cpuPerOp}, points: g[k]})
	}
	return d
}

func batchDim(r *report) *dimension {
	g := cellsOf(r, func(s string) (string, float64, bool) {
		rest, ok := strings.CutPrefix(s, "batch-get-1k-b")
		if !ok {
			return "", 0, false
		}
		b, x, ok := strings.Cut(rest, "-x")
		if !ok {
			return "", 0, false
		}
		n, err := strconv.Atoi(b)
		return "x" + x, float64(n), err == nil
	})
	d := &dimension{
		name: "batch", title: "Batches of GETs of 1 KiB, one server: cost as batches grow", xLabel: "GETs per batch",
		xFmt: func(x float64) string { return siLabel(x) }, note: note(r), order: r.Meta.Clients,
	}
	for _, k := range []string{"x1", "x4"} {
		label := "1 goroutine"
		if k == "x4" {
			label = "4 goroutines"
		}
		d.groups = append(d.groups, group{label: label, metrics: []metric{cmdsPerS, cpuPerCmd, allocsCmd}, points: g[k]})
	}
	return d
}

func clusterDim(rs []*report) *dimension {
	var pts []point
	var notes []string
	var order []string
	for _, r := range rs {
		m := float64(r.Meta.ClusterMasters)
		for _, p := range cellsOf(r, func(s string) (string, float64, bool) { return "", m, s == "cluster-get-1k-x64" && m > 0 })[""] {
			pts = append(pts, p)
		}
		notes = append(notes, fmt.Sprintf("%d primaries %s", r.Meta.ClusterMasters, orDefault(r.Meta.LoadAverage, "unknown")))
		if order == nil {
			order = r.Meta.Clients
		}
	}
	slices.SortFunc(rs, func(a, b *report) int { return a.Meta.ClusterMasters - b.Meta.ClusterMasters })
	slices.SortFunc(notes, func(a, b string) int {
		x, _ := strconv.Atoi(strings.Fields(a)[0])
		y, _ := strconv.Atoi(strings.Fields(b)[0])
		return x - y
	})
	// One note for the runs: they differ in the cluster and the load.
	first := *rs[0]
	first.Meta.LoadAverage = ""
	first.Meta.Server = "a cluster per point (" + strings.Join(slices.Collect(func(yield func(string) bool) {
		for _, r := range rs {
			if !yield(r.Meta.Server) {
				return
			}
		}
	}), ", ") + ")"
	all := strings.TrimSuffix(note(&first), ".") + "; load average at start: " + strings.Join(notes, ", ") + "."
	return &dimension{
		name: "cluster", title: "Cluster, 64 callers GET 1 KiB over the slots: cost as primaries grow", xLabel: "primaries (no replicas)",
		xFmt:   func(x float64) string { return strconv.Itoa(int(x)) },
		groups: []group{{label: "GET 1 KiB x64", metrics: []metric{opsPerSec, cpuPerOp, p99}, points: pts}},
		note:   all, order: order,
	}
}

// sizeLabel writes a byte count as 16 B, 1 KiB, 128 KiB, 1 MiB.
func sizeLabel(x float64) string {
	n := int(x)
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " B"
}

// siLabel writes x with a k or M suffix and at most three significant
// digits.
func siLabel(x float64) string {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	switch {
	case ax >= 1e6:
		return trim(x/1e6) + "M"
	case ax >= 1e4:
		return trim(x/1e3) + "k"
	}
	return trim(x)
}

func trim(x float64) string {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	var s string
	switch {
	case ax >= 100 || ax == float64(int64(ax)):
		s = strconv.FormatFloat(x, 'f', 0, 64)
	case ax >= 10:
		s = strconv.FormatFloat(x, 'f', 1, 64)
	case ax >= 1:
		s = strconv.FormatFloat(x, 'f', 2, 64)
	default:
		s = strconv.FormatFloat(x, 'g', 2, 64)
	}
	if strings.Contains(s, ".") && !strings.ContainsAny(s, "e") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
