package respire_test

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// addr is the server the examples talk to. It reads "localhost:6379" in the
// documentation; when go test runs the examples, TestMain points it at a
// throwaway server of its own (or at REDIS_ADDR when that is set), so that
// their // Output: lines are checked against a real server.
var addr = "localhost:6379"

// TestMain starts that server. Without one (no REDIS_ADDR, no redis-server
// or valkey-server in .servers/bin or on PATH) the examples are skipped and
// the other tests run as usual.
func TestMain(m *testing.M) {
	flag.Parse()
	stop, err := exampleServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "examples skipped:", err)
		skip := "^Example"
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
			skip = f.Value.String() + "|" + skip
		}
		_ = flag.Set("test.skip", skip)
	}
	code := m.Run()
	stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// exampleServer sets addr to a server for the examples and returns what
// stops it.
func exampleServer() (stop func(), err error) {
	if a := os.Getenv("REDIS_ADDR"); a != "" {
		addr = a
		return func() {}, nil
	}
	bin := ""
	for _, p := range []string{
		filepath.Join("..", ".servers", "bin", "redis-8.0-server"),
		filepath.Join("..", ".servers", "bin", "valkey-8.1-server"),
	} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			bin = p
			break
		}
	}
	for _, name := range []string{"redis-server", "valkey-server"} {
		if bin != "" {
			break
		}
		if p, err := exec.LookPath(name); err == nil {
			bin = p
		}
	}
	if bin == "" {
		return func() {}, fmt.Errorf("no redis-server or valkey-server (run make servers, or set REDIS_ADDR)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return func() {}, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return func() {}, fmt.Errorf("starting %s: %w", bin, err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	a := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err := net.DialTimeout("tcp", a, time.Second)
		if err == nil {
			conn.Close()
			addr = a
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return func() {}, fmt.Errorf("%s did not accept connections on %s: %w", bin, a, err)
		}
		time.Sleep(10 * time.Millisecond) // waiting for the server to listen
	}
}
