package respireotel_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"go.uber.org/goleak"
)

// The tests of this module start their own throwaway server, as
// tests/harness does, so that the module depends on no test module of the
// repository: the server of the repository's .servers/bin (make servers),
// else redis-server or valkey-server on PATH.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serverBinary finds a server to run.
func serverBinary(t testing.TB) string {
	for _, name := range []string{"redis-8.0-server", "valkey-8.1-server", "redis-7.0-server"} {
		p := filepath.Join("..", ".servers", "bin", name)
		if _, err := os.Stat(p); err == nil {
			abs, _ := filepath.Abs(p)
			return abs
		}
	}
	for _, name := range []string{"redis-server", "valkey-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no server: run `make servers` at the repository root, or put redis-server or valkey-server on PATH")
	return ""
}

// startServer runs a server on a free loopback port until the test ends
// and returns its address.
func startServer(t testing.TB, args ...string) string {
	t.Helper()
	bin := serverBinary(t)
	for try := 0; ; try++ {
		port := freePort(t)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(bin, append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if err := waitReady(addr, exited); err != nil {
			_ = cmd.Process.Kill()
			<-exited
			if try < 3 {
				continue // the port was taken meanwhile
			}
			t.Fatalf("server at %s: %v", addr, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		return addr
	}
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitReady waits until the server answers PING, or exits.
func waitReady(addr string, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := respire.Connect(ctx, respire.Options{Addr: addr, FailFast: true})
		if err == nil {
			_, err = c.Ping(ctx)
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case err := <-exited:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
