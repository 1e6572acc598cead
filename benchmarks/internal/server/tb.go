package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
)

// processTB is a testing.TB that lives as long as the process wants it to,
// so that the test harness can start a server that outlives any single
// benchmark (TestMain) or that runs outside `go test` (the load tool).
//
// Embedding the interface satisfies its unexported method; every exported
// method is implemented below, so the nil embedded value is never called.
type processTB struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	msgs     []string
	ctx      context.Context
	cancel   context.CancelFunc
}

func newProcessTB() *processTB {
	tb := &processTB{}
	tb.ctx, tb.cancel = context.WithCancel(context.Background())
	return tb
}

// close runs the cleanups, last registered first.
func (tb *processTB) close() {
	tb.cancel()
	tb.mu.Lock()
	cs := tb.cleanups
	tb.cleanups = nil
	tb.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

func (tb *processTB) Cleanup(f func()) {
	tb.mu.Lock()
	tb.cleanups = append(tb.cleanups, f)
	tb.mu.Unlock()
}

func (tb *processTB) Log(args ...any) { tb.record(fmt.Sprintln(args...)) }
func (tb *processTB) Logf(format string, args ...any) {
	tb.record(fmt.Sprintf(format, args...))
}
func (tb *processTB) Error(args ...any)                 { tb.Log(args...); tb.Fail() }
func (tb *processTB) Errorf(format string, args ...any) { tb.Logf(format, args...); tb.Fail() }
func (tb *processTB) Fatal(args ...any)                 { tb.Log(args...); tb.FailNow() }
func (tb *processTB) Fatalf(format string, args ...any) { tb.Logf(format, args...); tb.FailNow() }
func (tb *processTB) Skip(args ...any)                  { tb.Log(args...); tb.SkipNow() }
func (tb *processTB) Skipf(format string, args ...any)  { tb.Logf(format, args...); tb.SkipNow() }

// SkipNow is a failure here: nothing may be skipped when starting a server.
func (tb *processTB) SkipNow()      { tb.FailNow() }
func (tb *processTB) Skipped() bool { return false }

func (tb *processTB) Fail() {
	tb.mu.Lock()
	tb.failed = true
	tb.mu.Unlock()
}

// FailNow ends the calling goroutine, as testing does; Start runs the
// harness on a goroutine of its own for that reason.
func (tb *processTB) FailNow() {
	tb.Fail()
	runtime.Goexit()
}

func (tb *processTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *processTB) record(s string) {
	tb.mu.Lock()
	tb.msgs = append(tb.msgs, s)
	tb.mu.Unlock()
}

func (tb *processTB) messages() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.msgs...)
}

func (tb *processTB) Helper()                  {}
func (tb *processTB) Name() string             { return "respire-benchmarks" }
func (tb *processTB) Attr(key, value string)   {}
func (tb *processTB) Setenv(key, value string) { _ = os.Setenv(key, value) }
func (tb *processTB) Chdir(dir string)         { _ = os.Chdir(dir) }
func (tb *processTB) Context() context.Context { return tb.ctx }
func (tb *processTB) Output() io.Writer        { return os.Stderr }
func (tb *processTB) ArtifactDir() string      { return tb.TempDir() }

func (tb *processTB) TempDir() string {
	dir, err := os.MkdirTemp("", "respire-bench-")
	if err != nil {
		tb.Fatalf("TempDir: %v", err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
