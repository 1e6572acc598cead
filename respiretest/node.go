package respiretest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// ErrNodeKilled is wrapped by the error of Stop or Continue on a node that
// Kill ended.
var ErrNodeKilled = errors.New("respiretest: the node was killed")

// Node is one server process of a Cluster or a Sentinel deployment: a
// cluster node, a data node (primary or replica) or a sentinel. Its
// methods are safe for concurrent use. Compare nodes by pointer or Addr.
type Node struct {
	// Addr is the node's address, "127.0.0.1:port".
	Addr string
	// ID is a cluster node's ID (CLUSTER MYID); "" outside a cluster.
	ID string
	// Dir is the node's temporary directory, which holds its log
	// (server.log) and, in a cluster, its nodes.conf; removed when the
	// deployment is closed.
	Dir string

	srv *Server

	mu      sync.Mutex
	killed  bool
	stopped bool
}

// String returns the node's address.
func (n *Node) String() string { return n.Addr }

// Kill ends the node's process with SIGKILL, as a crash would, and waits
// until it is gone. The rest of the deployment notices after its failure
// timeout (ClusterOptions.NodeTimeout, SentinelOptions.DownAfter); see
// WaitFailover. Killing a killed node does nothing. A killed node stays
// down: its directory is removed with the deployment.
func (n *Node) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.killed {
		return nil
	}
	n.srv.proc.Kill()
	n.killed, n.stopped = true, false
	return nil
}

// Stop suspends the node's process with SIGSTOP: its sockets stay open
// and it answers nothing, as a hung or partitioned server would.
// Continue lets it go on. A node stopped for longer than the failure
// timeout is failed over as a killed one would be. Stopping a stopped node
// does nothing; the deployment's clean-up kills stopped nodes too. Not
// available on Windows.
func (n *Node) Stop() error {
	return n.signal((*testserver.Process).Pause, "stopping", true)
}

// Continue resumes a node that Stop suspended, with SIGCONT. Continuing a
// node that is not stopped does nothing.
func (n *Node) Continue() error {
	return n.signal((*testserver.Process).Resume, "continuing", false)
}

func (n *Node) signal(send func(*testserver.Process) error, verb string, stop bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.killed:
		return fmt.Errorf("respiretest: %s %s: %w", verb, n.Addr, ErrNodeKilled)
	case n.stopped == stop:
		return nil
	}
	if err := send(n.srv.proc); err != nil {
		return fmt.Errorf("respiretest: %s %s: %w", verb, n.Addr, err)
	}
	n.stopped = stop
	return nil
}

// port returns the node's port.
func (n *Node) port() int {
	_, p, _ := net.SplitHostPort(n.Addr)
	port, _ := strconv.Atoi(p)
	return port
}

// up reports whether the node is neither killed nor stopped, so that it
// can be asked about the deployment.
func (n *Node) up() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.killed && !n.stopped
}

// do sends one command to the node.
func (n *Node) do(ctx context.Context, args ...string) (any, error) {
	return do(ctx, n.Addr, args...)
}

// close kills the node's process and removes its directory.
func (n *Node) close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.killed = true
	return n.srv.Close()
}

// logTail returns the end of the node's log, for an error or a failed
// test.
func (n *Node) logTail() string {
	return tail(n.srv.Dir + string(os.PathSeparator) + logName)
}

// startNodes starts count processes of bin at once, the i-th with the
// arguments args(i, port, dir) gives, each within timeout. On an error
// the nodes already started are closed.
func startNodes(ctx context.Context, bin string, count int, timeout time.Duration, args func(i, port int, dir string) ([]string, error)) ([]*Node, error) {
	nodes := make([]*Node, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := range count {
		wg.Go(func() {
			srv, err := startProcessArgs(ctx, bin, timeout, func(port int, dir string) ([]string, error) {
				return args(i, port, dir)
			})
			if err != nil {
				errs[i] = err
				return
			}
			nodes[i] = &Node{Addr: srv.Addr, Dir: srv.Dir, srv: srv}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeNodes(nodes)
		return nil, err
	}
	return nodes, nil
}

// closeNodes closes every node and returns the first error.
func closeNodes(nodes []*Node) error {
	var first error
	for _, n := range nodes {
		if n == nil {
			continue
		}
		if err := n.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// localInstallHint says how to get a server binary, for a deployment that
// Docker cannot serve.
const localInstallHint = `install one:
  Debian/Ubuntu: apt-get install redis-server   (or valkey-server)
  macOS:         brew install redis             (or valkey)
  or set ` + EnvServer + `=/path/to/redis-server`

// localBinary returns the server binary for a cluster or a Sentinel
// deployment (what), named by field or found as for Start but never in Docker: nodes in
// containers would announce addresses that neither the other nodes nor
// the client can reach. The error wraps ErrNoServer when there is none.
func localBinary(path, field, what string) (string, error) {
	bin, err := findBinary(path, field)
	if err != nil {
		return "", err
	}
	if bin == "" {
		return "", fmt.Errorf("%w: no redis-server or valkey-server on PATH, and %s is not set (%s needs a local binary: Docker is not used for it); %s",
			ErrNoServer, EnvServer, what, localInstallHint)
	}
	return bin, nil
}
