// Command demo starts a throwaway Redis server on a free loopback port and
// shows the Respire client working against it: typed commands, a missing
// key, a server error, 64 goroutines sharing one connection, and Do.
//
//	make demo            # or: go run ./cmd/demo
//
// It looks for the server where `make servers` installs it (.servers/bin,
// or $RESPIRE_SERVERS_DIR/bin, as the test harness does) and then for
// redis-server on PATH; set RESPIRE_DEMO_SERVER to use another binary.

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/respire-go/respire/respire"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// findServer and run start the server themselves, not with
// respiretest/testserver as the soak tool and the test harness do:
// respiretest is a module of its own that requires this one, and this
// module requiring it back would make a cycle (and bring respiretest's
// Docker libraries into the module graph of every user of the client).
func findServer() (string, error) {
	if p := os.Getenv("RESPIRE_DEMO_SERVER"); p != "" {
		return p, nil
	}
	dir := os.Getenv("RESPIRE_SERVERS_DIR")
	if dir == "" {
		dir = ".servers"
	}
	for _, name := range []string{"redis-8.0-server", "redis-7.0-server"} {
		p := filepath.Join(dir, "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	return "", errors.New("no redis-server found: run `make servers` or `apt-get install redis-server`")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func run() error {
	bin, err := findServer()
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "respire-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "server.log"))
	srv.SysProcAttr = sysProcAttr()
	if err := srv.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	fmt.Printf("started %s on %s (throwaway, data in %s)\n", filepath.Base(bin), addr, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c *respire.Client
	for {
		c, err = respire.Connect(ctx, respire.Options{Addr: addr, ClientName: "respire-demo"})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond) // the server is still starting
	}
	defer c.Close()

	// HELLO reports the server and the protocol. Do refuses it (on a
	// shared connection it would renegotiate the protocol under the other
	// callers); WithConn lends a connection of the caller's own.
	var hello respire.Reply
	if err := c.WithConn(ctx, func(conn *respire.Conn) error {
		var err error
		hello, err = conn.Do(ctx, "HELLO")
		return err
	}); err != nil {
		return err
	}
	info, _ := hello.Map()
	version, _ := info["version"].Text()
	proto, _ := info["proto"].Int64()
	fmt.Printf("connected: server %s, RESP%d\n", version, proto)

	if err := c.Set(ctx, "greeting", "hello from respire", nil); err != nil {
		return err
	}
	v, err := c.Get(ctx, "greeting")
	if err != nil {
		return err
	}
	fmt.Printf("GET greeting -> %q\n", v)

	if _, err := c.Get(ctx, "no-such-key"); errors.Is(err, respire.Nil) {
		fmt.Println("GET no-such-key -> respire.Nil (missing, not an empty string)")
	}

	_, err = c.Incr(ctx, "greeting")
	var se *respire.Error
	if errors.As(err, &se) {
		fmt.Printf("INCR greeting -> *respire.Error (prefix %s): %q\n", se.Prefix, se.Message)
	}

	// 64 goroutines share the client; their commands are pipelined.
	before := c.Stats()
	var wg sync.WaitGroup
	start := time.Now()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if _, err := c.Incr(ctx, "counter"); err != nil {
					fmt.Fprintln(os.Stderr, "INCR:", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	n, err := c.Get(ctx, "counter")
	if err != nil {
		return err
	}
	after := c.Stats()
	replies := after.Replies - before.Replies
	reads := after.Reads - before.Reads
	fmt.Printf("64 goroutines x 500 INCR -> counter=%s in %v (%.0f ops/s, %.1f replies per socket read)\n",
		n, elapsed.Round(time.Millisecond), float64(replies)/elapsed.Seconds(), float64(replies)/float64(max(reads, 1)))

	r, err := c.Do(ctx, "DBSIZE")
	if err != nil {
		return err
	}
	size, _ := r.Int64()
	fmt.Printf("DBSIZE -> %d\n", size)
	fmt.Println("done; stopping the throwaway server")
	return nil
}
