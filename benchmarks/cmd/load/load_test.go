package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/tests/harness"
	"go.uber.org/goleak"
)

// TestCellSmoke runs one short cell per mode against a real server and
// checks that it measured something sensible and left no goroutine behind.
func TestCellSmoke(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	if err := server.Seed(srv.Addr); err != nil {
		t.Fatal(err)
	}
	obs, err := server.NewObserver(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	rep := &Report{Meta: Meta{Shapes: []string{"get-1k-seq", "incr-conc64", "get-8k-pipe32", "get-1k-pipe32x4", "mget-100-seq", "set-100k-conc16"}, Rounds: 1}}
	for _, name := range rep.Meta.Shapes {
		s, err := shapeByName(name)
		if err != nil {
			t.Fatal(err)
		}
		d := 40 * time.Millisecond // about 300ms in all
		m, err := runCell(context.Background(), cellConfig{
			Client: "respire-nofiller", Shape: s, Addr: srv.Addr, Duration: d, Warmup: 10 * time.Millisecond,
		}, obs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Ops <= 0 || m.OpsPerSec <= 0 || m.P50us <= 0 || m.P99us < m.P50us {
			t.Errorf("%s: implausible measurement %+v", name, m)
		}
		// A value larger than the server's read buffer (16 KiB) takes
		// several reads per command, so fewer than one command per read is
		// right for set-100k; zero means the counters were not read.
		if m.SrvCmdsPerRead <= 0 || m.ClientBytesPerRead <= 0 {
			t.Errorf("%s: no server or client read counts: %+v", name, m)
		}
		c := rep.cell("respire-nofiller", name)
		c.Rounds = append(c.Rounds, m)
	}
	rep.summarize()
	var out bytes.Buffer
	rep.writeMarkdown(&out)
	for _, want := range []string{"### get-1k-seq", "| respire-nofiller |", "### get-8k-pipe32"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDriverCatchesWrongReply makes sure verification is not a no-op.
func TestDriverCatchesWrongReply(t *testing.T) {
	s, err := shapeByName("get-1k-seq")
	if err != nil {
		t.Fatal(err)
	}
	s.Value = s.Value[:len(s.Value)-1] + "?"
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	if err := server.Seed(srv.Addr); err != nil {
		t.Fatal(err)
	}
	obs, err := server.NewObserver(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	_, err = runCell(context.Background(), cellConfig{Client: "goredis", Shape: s, Addr: srv.Addr, Duration: 10 * time.Millisecond}, obs)
	if err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("a wrong reply was not reported: %v", err)
	}
}
