package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/tests/harness"
)

// TestMain lets the test binary serve as the tool's child processes, as
// the tool's own executable does.
func TestMain(m *testing.M) {
	if isChild, err := runChild(); isChild {
		if err != nil {
			fmt.Fprintln(os.Stderr, "load child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFreshCell runs a cell in a child process (-fresh) and gets its
// measurement back, with the live heap the child held; a shape the child
// does not know is an error naming it.
func TestFreshCell(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	if err := server.Seed(srv.Addr); err != nil {
		t.Fatal(err)
	}
	s, err := shapeByName("get-1k-seq")
	if err != nil {
		t.Fatal(err)
	}
	cfg := cellConfig{Client: "respire-nofiller", Shape: s, Addr: srv.Addr, Duration: 50 * time.Millisecond, Warmup: 10 * time.Millisecond}
	m, err := runFreshCell(cfg, srv.Addr, 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.Ops <= 0 || m.OpsPerSec <= 0 || m.P50us <= 0 || m.SrvCmdsPerRead <= 0 {
		t.Errorf("implausible measurement from the child: %+v", m)
	}
	cfg.Shape.Name = "no-such-shape"
	if _, err := runFreshCell(cfg, srv.Addr, 0); err == nil {
		t.Error("a cell of an unknown shape did not fail")
	}
}
