package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Report is everything one run of the tool measured; it is what the JSON
// file holds.
type Report struct {
	Meta  Meta    `json:"meta"`
	Cells []*Cell `json:"cells"`
}

// Meta describes the run.
type Meta struct {
	Started        time.Time `json:"started"`
	GoVersion      string    `json:"go_version"`
	GOOS           string    `json:"goos"`
	GOARCH         string    `json:"goarch"`
	GOMAXPROCS     int       `json:"gomaxprocs"`
	NumCPU         int       `json:"num_cpu"`
	Server         string    `json:"server"`
	Duration       string    `json:"duration_per_cell"`
	Warmup         string    `json:"warmup_per_cell"`
	Rounds         int       `json:"rounds"`
	Clients        []string  `json:"clients"`
	Shapes         []string  `json:"shapes"`
	RedisBenchmark string    `json:"redis_benchmark"`
	LoadAverage    string    `json:"load_average,omitempty"`
	// HeapMiB is the live heap the tool held besides the clients' (-heap).
	HeapMiB int `json:"heap_mib,omitempty"`
	// CPU is the processor's model name (/proc/cpuinfo), when known.
	CPU string `json:"cpu,omitempty"`
	// ClusterMasters is the primaries of the cluster the run used
	// (-cluster), 0 for one server.
	ClusterMasters int `json:"cluster_masters,omitempty"`
	// Busy is the busy loops that competed for the cores in every cell
	// (-busy), BusyPinned whether loop i was bound to CPU i (-busy-pin);
	// Link the round trip the delaying proxy added (-link).
	Busy int `json:"busy,omitempty"`
	// Fresh is whether every cell ran in a child process of its own
	// (-fresh).
	Fresh      bool   `json:"fresh,omitempty"`
	BusyPinned bool   `json:"busy_pinned,omitempty"`
	Link       string `json:"link,omitempty"`
	// Deadline is the timeout of the context every call ran under
	// (-deadline), empty for context.Background().
	Deadline string `json:"deadline,omitempty"`
	// LinkCores is the cores the proxy process used on average over the
	// run: what the link itself cost the machine.
	LinkCores float64 `json:"link_cores,omitempty"`
}

// Cell holds the rounds of one client on one shape and their medians.
type Cell struct {
	Client string        `json:"client"`
	Shape  string        `json:"shape"`
	Rounds []Measurement `json:"rounds"`
	Median Measurement   `json:"median"`
	Error  string        `json:"error,omitempty"`
}

// summarize sets each cell's Median, field by field.
func (r *Report) summarize() {
	for _, c := range r.Cells {
		if len(c.Rounds) == 0 {
			continue
		}
		med := func(f func(Measurement) float64) float64 {
			v := make([]float64, len(c.Rounds))
			for i, m := range c.Rounds {
				v[i] = f(m)
			}
			return median(v)
		}
		c.Median = Measurement{
			Ops:                    int64(med(func(m Measurement) float64 { return float64(m.Ops) })),
			Seconds:                med(func(m Measurement) float64 { return m.Seconds }),
			OpsPerSec:              med(func(m Measurement) float64 { return m.OpsPerSec }),
			P50us:                  med(func(m Measurement) float64 { return m.P50us }),
			P99us:                  med(func(m Measurement) float64 { return m.P99us }),
			CPUusPerOp:             med(func(m Measurement) float64 { return m.CPUusPerOp }),
			CtxSwPerOp:             med(func(m Measurement) float64 { return m.CtxSwPerOp }),
			AllocsOp:               med(func(m Measurement) float64 { return m.AllocsOp }),
			BytesOp:                med(func(m Measurement) float64 { return m.BytesOp }),
			GCsPerMop:              med(func(m Measurement) float64 { return m.GCsPerMop }),
			SrvCmdsPerRead:         med(func(m Measurement) float64 { return m.SrvCmdsPerRead }),
			SrvCPUusPerOp:          med(func(m Measurement) float64 { return m.SrvCPUusPerOp }),
			ClientBytesPerRead:     med(func(m Measurement) float64 { return m.ClientBytesPerRead }),
			ClientBytesPerSockRead: med(func(m Measurement) float64 { return m.ClientBytesPerSockRead }),
			ClientCmdsPerWrite:     med(func(m Measurement) float64 { return m.ClientCmdsPerWrite }),
			BusyCores:              med(func(m Measurement) float64 { return m.BusyCores }),
		}
	}
}

// medianBusyCores is the median over every cell's BusyCores.
func (r *Report) medianBusyCores() float64 {
	var v []float64
	for _, c := range r.Cells {
		if c.Median.BusyCores > 0 {
			v = append(v, c.Median.BusyCores)
		}
	}
	if len(v) == 0 {
		return 0
	}
	return median(v)
}

func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func (r *Report) cell(client, shape string) *Cell {
	for _, c := range r.Cells {
		if c.Client == client && c.Shape == shape {
			return c
		}
	}
	c := &Cell{Client: client, Shape: shape}
	r.Cells = append(r.Cells, c)
	return c
}

// baseline is the client the ratio column compares with.
const baseline = "respire-nofiller"

// writeMarkdown prints one table per shape, medians over the rounds.
func (r *Report) writeMarkdown(w io.Writer) {
	m := r.Meta
	fmt.Fprintf(w, "## Load: %s, %s %s/%s, GOMAXPROCS=%d (NumCPU %d)\n\n", m.Server, m.GoVersion, m.GOOS, m.GOARCH, m.GOMAXPROCS, m.NumCPU)
	fmt.Fprintf(w, "%d rounds × %s per cell (after %s warm-up), clients interleaved; medians over rounds. redis-benchmark: %s.", m.Rounds, m.Duration, m.Warmup, m.RedisBenchmark)
	if m.LoadAverage != "" {
		fmt.Fprintf(w, " Load average at start: %s.", m.LoadAverage)
	}
	if m.Fresh {
		fmt.Fprint(w, " Every cell ran in a fresh child process of its own (-fresh).")
	}
	if m.HeapMiB > 0 {
		fmt.Fprintf(w, " The tool held %d MiB of live heap (-heap).", m.HeapMiB)
	}
	if m.Busy > 0 {
		pin := ""
		if m.BusyPinned {
			pin = ", each bound to a CPU of its own,"
		}
		fmt.Fprintf(w, " Busy host: %d busy loops in a process of their own%s competed for the cores in every cell (-busy; the busy loops used %.2f cores at the median of the cells).", m.Busy, pin, r.medianBusyCores())
	}
	if m.Deadline != "" {
		fmt.Fprintf(w, " Every call (every pipeline) ran under a context with a %s timeout, cancelled after it (-deadline); its allocations count in allocs/op.", m.Deadline)
	}
	if m.Link != "" {
		fmt.Fprintf(w, " Link: every client and redis-benchmark reached the server through a delaying proxy on loopback adding %s to each round trip, half each way (-link); the proxy process used %.2f cores on average over the run.", m.Link, m.LinkCores)
	}
	fmt.Fprintf(w, "\nLatency is per command, per pipeline for pipe32. `×%s` is this client's ops/s divided by %s's.\n\n", baseline, baseline)
	for _, shape := range m.Shapes {
		fmt.Fprintf(w, "### %s\n\n", shape)
		fmt.Fprintf(w, "| client | ops/s | ×%s | p50 µs | p99 µs | CPU µs/op | ctx sw/op | allocs/op | B/op | GCs/Mop | srv cmds/read | srv CPU µs/op | B/parse | B/sock read | cmds/write |\n", baseline)
		fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
		var base float64
		for _, c := range r.Cells {
			if c.Shape == shape && c.Client == baseline && c.Error == "" {
				base = c.Median.OpsPerSec
			}
		}
		for _, c := range r.Cells {
			if c.Shape != shape {
				continue
			}
			if c.Error != "" {
				fmt.Fprintf(w, "| %s | error: %s |||||||||||||\n", c.Client, strings.ReplaceAll(c.Error, "|", "/"))
				continue
			}
			x := c.Median
			ratio := "–"
			if base > 0 {
				ratio = fmt.Sprintf("%.2f", x.OpsPerSec/base)
			}
			allocs, bytes, bpr := fmt.Sprintf("%.2f", x.AllocsOp), fmt.Sprintf("%.0f", x.BytesOp), "–"
			gcs := fmt.Sprintf("%.0f", x.GCsPerMop)
			if c.Client == ceilingName {
				allocs, bytes, gcs = "–", "–", "–"
			}
			if x.ClientBytesPerRead > 0 {
				bpr = fmt.Sprintf("%.0f", x.ClientBytesPerRead)
			}
			bps, cpw := "–", "–"
			if x.ClientBytesPerSockRead > 0 {
				bps = fmt.Sprintf("%.0f", x.ClientBytesPerSockRead)
			}
			if x.ClientCmdsPerWrite > 0 {
				cpw = fmt.Sprintf("%.1f", x.ClientCmdsPerWrite)
			}
			csw := fmt.Sprintf("%.2f", x.CtxSwPerOp)
			if c.Client == ceilingName {
				csw = "–"
			}
			fmt.Fprintf(w, "| %s | %.0f | %s | %.1f | %.1f | %.2f | %s | %s | %s | %s | %.2f | %.2f | %s | %s | %s |\n",
				c.Client, x.OpsPerSec, ratio, x.P50us, x.P99us, x.CPUusPerOp, csw, allocs, bytes, gcs, x.SrvCmdsPerRead, x.SrvCPUusPerOp, bpr, bps, cpw)
		}
		fmt.Fprintln(w)
	}
}

func (r *Report) writeJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
