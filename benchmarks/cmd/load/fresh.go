package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/server"
)

// -fresh runs every cell in a child process of its own (the tool's own
// executable, role "cell"), so that no cell inherits another's heap, its
// collector's pace, its idle threads or its pools: a long-lived process
// and a fresh one measured the same client differently on a busy host
// (a batch of 10 at 0.66x rueidis in the tool, level in fresh processes).
// The child holds -heap too, and reports its Measurement as one JSON line.

// freshCell is what a "cell" child runs: cellConfig with the shape by
// name, and the address of the server itself for the observer.
type freshCell struct {
	Client   string        `json:"client"`
	Shape    string        `json:"shape"`
	Addr     string        `json:"addr"`
	Server   string        `json:"server"`
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	Link     time.Duration `json:"link"`
	Deadline time.Duration `json:"deadline"`
	HeapMiB  int           `json:"heap_mib"`
}

// cellEnv carries a freshCell, as JSON, to a "cell" child.
const cellEnv = "RESPIRE_LOAD_CELL"

// runFreshCell runs cfg in a child process and returns its Measurement.
func runFreshCell(cfg cellConfig, serverAddr string, heapMiB int) (Measurement, error) {
	var m Measurement
	spec, err := json.Marshal(freshCell{
		Client: cfg.Client, Shape: cfg.Shape.Name, Addr: cfg.Addr, Server: serverAddr,
		Duration: cfg.Duration, Warmup: cfg.Warmup, Link: cfg.Link, Deadline: cfg.Deadline, HeapMiB: heapMiB,
	})
	if err != nil {
		return m, err
	}
	exe, err := os.Executable()
	if err != nil {
		return m, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=cell", cellEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return m, fmt.Errorf("cell child: %w", err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return m, fmt.Errorf("cell child printed %q: %w", line, err)
	}
	return m, nil
}

// cellChild is the "cell" role: it runs the cell that cellEnv describes
// and prints its Measurement.
func cellChild() error {
	var fc freshCell
	if err := json.Unmarshal([]byte(os.Getenv(cellEnv)), &fc); err != nil {
		return fmt.Errorf("%s: %w", cellEnv, err)
	}
	s, err := shapeByName(fc.Shape)
	if err != nil {
		return err
	}
	held := holdHeap(fc.HeapMiB)
	defer runtime.KeepAlive(held)
	obs, err := server.NewObserver(fc.Server)
	if err != nil {
		return err
	}
	defer obs.Close()
	m, err := runCell(context.Background(), cellConfig{
		Client: fc.Client, Shape: s, Addr: fc.Addr, Duration: fc.Duration,
		Warmup: fc.Warmup, Link: fc.Link, Deadline: fc.Deadline,
	}, obs)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	if err := json.NewEncoder(w).Encode(m); err != nil {
		return err
	}
	return w.Flush()
}
