package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/linkproxy"
)

// The busy host and the link (issue 33). Both run in child processes of
// the tool (the tool's own executable, told what to be by childEnv), so
// that neither the busy loops' CPU nor the proxy's CPU, allocations and
// collections are counted as the client's: getrusage(RUSAGE_SELF) and
// runtime.MemStats see this process only.
//
//	-busy N    N busy loops in a child process, started before each cell
//	           (before the client connects and warms up) and stopped after
//	           it, so that every client and redis-benchmark meet the same
//	           contention for the cores; with -busy-pin (the default),
//	           loop i is bound to CPU i, so that every core has its CPU-bound
//	           neighbour in every cell (unbound, the kernel sometimes put
//	           both loops on one core and left the other free, and a cell's
//	           ops/s varied threefold with that placement)
//	-link RTT  a delaying proxy (internal/linkproxy) in a child process on
//	           loopback, between every client (redis-benchmark too) and the
//	           server, adding RTT to each round trip: RTT/2 in each
//	           direction, per chunk of bytes, ordering and throughput kept
//
// The child reads its standard input until it ends: the tool stops a child
// by closing that pipe, and a child whose parent died ends by itself.
const childEnv = "RESPIRE_LOAD_CHILD"

// runChild runs this process as a child if childEnv says so, and reports
// whether it did (it then returns only on an error).
func runChild() (bool, error) {
	role := os.Getenv(childEnv)
	if role == "" {
		return false, nil
	}
	kind, arg, _ := strings.Cut(role, ":")
	switch kind {
	case "cell":
		return true, cellChild()
	case "busy", "busy-pinned":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return true, fmt.Errorf("%s=%q: want busy:N with N ≥ 1", childEnv, role)
		}
		runtime.GOMAXPROCS(n)
		pinned := make(chan error, n)
		for i := range n {
			go func() {
				if kind == "busy-pinned" {
					pinned <- pinThread(i)
				}
				spin()
			}()
		}
		if kind == "busy-pinned" {
			for range n {
				if err := <-pinned; err != nil {
					return true, err
				}
			}
		}
		fmt.Println("ready")
	case "link":
		upstream, d, ok := strings.Cut(arg, ",")
		oneWay, err := time.ParseDuration(d)
		if !ok || err != nil {
			return true, fmt.Errorf("%s=%q: want link:UPSTREAM,ONEWAY", childEnv, role)
		}
		p, err := linkproxy.Listen(upstream, oneWay)
		if err != nil {
			return true, err
		}
		defer p.Close()
		fmt.Println(p.Addr())
	default:
		return true, fmt.Errorf("%s=%q: unknown role", childEnv, role)
	}
	io.Copy(io.Discard, os.Stdin)
	return true, nil
}

// spin keeps one core busy, as a neighbour's CPU-bound work would: no
// system calls, no memory traffic; the OS scheduler shares the cores
// between it and everything else.
func spin() {
	for {
	}
}

// child is a running child process of the tool.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	began time.Time
	first string // the first line it printed
}

// startChild starts this executable in role and waits for its first line
// (the busy loops are running; the proxy's address).
func startChild(role string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, began: time.Now()}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("child %s: %w", role, err)
	}
	c.first = strings.TrimSpace(line)
	return c, nil
}

// stop ends the child and returns the cores it used on average while it
// ran (its user plus system CPU over its wall-clock time).
func (c *child) stop() float64 {
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	wall := time.Since(c.began)
	ps := c.cmd.ProcessState
	if ps == nil || wall <= 0 {
		return 0
	}
	return (ps.UserTime() + ps.SystemTime()).Seconds() / wall.Seconds()
}

// startBusy starts n busy loops in a child process, each bound to a CPU of
// its own if pin, or nothing for n = 0.
func startBusy(n int, pin bool) (*child, error) {
	if n <= 0 {
		return nil, nil
	}
	if pin {
		return startChild("busy-pinned:" + strconv.Itoa(n))
	}
	return startChild("busy:" + strconv.Itoa(n))
}

// startLink starts the delaying proxy to upstream for a round trip of rtt
// and returns its address.
func startLink(upstream string, rtt time.Duration) (*child, string, error) {
	if rtt <= 0 {
		return nil, "", errors.New("-link: the round trip must be positive")
	}
	if strings.Contains(upstream, ",") {
		return nil, "", errors.New("-link: not with -cluster")
	}
	c, err := startChild(fmt.Sprintf("link:%s,%s", upstream, rtt/2))
	if err != nil {
		return nil, "", err
	}
	return c, c.first, nil
}
