package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// Failovers of a Sentinel deployment, and waiting for it to settle.

// Failover asks a running sentinel for SENTINEL FAILOVER, trying again
// while the sentinels are not ready for one (INPROG, NOGOODSLAVE). A
// sentinel in TILT mode (for 30s after it was stopped or its clock jumped)
// would accept it but act only when the TILT ends: it is not asked.
func (d *Sentinels) Failover(ctx context.Context) error {
	return poll(ctx, "SENTINEL FAILOVER", func(ctx context.Context) error {
		last := errors.New("every sentinel is stopped or in TILT mode")
		for _, sp := range d.Sentinel {
			if !sp.running() || sp.isPaused() || sp.tilted(ctx) {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := sp.Do(cctx, "SENTINEL", "FAILOVER", d.Config.MasterName)
			cancel()
			if err == nil {
				return nil
			}
			last = err
		}
		return last
	})
}

// RestartAsReplica restarts a data node (killed or not) as a replica of
// master, with an empty dataset.
func (d *Sentinels) RestartAsReplica(t testing.TB, s *Server, master string) {
	t.Helper()
	s.mu.Lock()
	s.Config.Args = replicaOfArgs(s.Config.Args, master)
	s.mu.Unlock()
	s.Restart(t)
}

// WaitStable waits until the deployment is whole again after a test: every
// sentinel runs and agrees on the master, whose ROLE says master with all
// the other data nodes online as its replicas, and no sentinel reports a
// failure or a failover of it. Dead or stopped processes are brought back;
// a data node that believes it is a master beside the sentinels' is made a
// replica at once, as Sentinel would after a while.
func (d *Sentinels) WaitStable(ctx context.Context) error {
	if err := d.resumeData(); err != nil {
		return err
	}
	for _, sp := range d.Sentinel {
		_ = sp.Resume()
		if !sp.running() {
			if err := sp.Restart(); err != nil {
				return err
			}
		}
	}
	return poll(ctx, "a stable Sentinel deployment", func(ctx context.Context) error {
		master, err := d.MasterAddr(ctx)
		if err != nil {
			return err
		}
		for _, sp := range d.Sentinel {
			a, err := sp.masterAddr(ctx, d.Config.MasterName)
			if err != nil {
				return fmt.Errorf("sentinel %s: %v", sp.Addr, err)
			}
			if a != master {
				return fmt.Errorf("sentinel %s names %s, not %s", sp.Addr, a, master)
			}
			if err := sp.checkHealthy(ctx, d.Config.MasterName, len(d.Sentinel)-1); err != nil {
				return fmt.Errorf("sentinel %s: %v", sp.Addr, err)
			}
		}
		m := d.Node(master)
		if m == nil {
			return fmt.Errorf("the sentinels name %s, not a data node", master)
		}
		for _, s := range d.Replicas(master) {
			if err := s.waitReplicaOf(ctx, d.t, master); err != nil {
				return err
			}
		}
		info, err := doCtx(ctx, m, "INFO", "replication")
		if err != nil {
			return fmt.Errorf("master %s: %v", master, err)
		}
		if got := testserver.InfoField(fmt.Sprint(info), "role"); got != "master" {
			return fmt.Errorf("master %s reports role %s", master, got)
		}
		if n := strings.Count(fmt.Sprint(info), "state=online"); n != len(d.Data)-1 {
			return fmt.Errorf("master %s has %d replicas online, want %d", master, n, len(d.Data)-1)
		}
		return nil
	})
}

// waitReplicaOf checks that s is a replica of master in sync, restarting
// it or sending REPLICAOF when it is dead or a master of its own.
func (s *Server) waitReplicaOf(ctx context.Context, t testing.TB, master string) error {
	info, err := doCtx(ctx, s, "INFO", "replication")
	if err != nil {
		s.mu.Lock()
		s.Config.Args = replicaOfArgs(s.Config.Args, master)
		s.mu.Unlock()
		s.Restart(t)
		return fmt.Errorf("data node %s was down: restarted", s.Addr)
	}
	str := fmt.Sprint(info)
	host, port, _ := strings.Cut(master, ":")
	if testserver.InfoField(str, "role") != "slave" || testserver.InfoField(str, "master_port") != port {
		_, _ = doCtx(ctx, s, "REPLICAOF", host, port)
		return fmt.Errorf("data node %s was not a replica of %s", s.Addr, master)
	}
	if testserver.InfoField(str, "master_link_status") != "up" {
		return fmt.Errorf("data node %s: link to %s down", s.Addr, master)
	}
	return nil
}

// checkHealthy checks that the sentinel sees the master without a failure
// or a failover, and the other sentinels.
func (sp *SentinelProc) checkHealthy(ctx context.Context, name string, others int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := sp.Do(ctx, "SENTINEL", "MASTER", name)
	if err != nil {
		return err
	}
	f := testserver.Pairs(v)
	if f["flags"] != "master" {
		return fmt.Errorf("master flags %q", f["flags"])
	}
	if f["num-other-sentinels"] != strconv.Itoa(others) {
		return fmt.Errorf("knows %s other sentinels, want %d", f["num-other-sentinels"], others)
	}
	return nil
}

func doCtx(ctx context.Context, s *Server, args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return s.Do(ctx, args...)
}

// WaitReplicated waits until every replica of the master at addr has
// received everything the master has written so far (its replication
// offset), whoever wrote it.
func (d *Sentinels) WaitReplicated(ctx context.Context, master string) error {
	m := d.Node(master)
	if m == nil {
		return fmt.Errorf("%s is not a data node", master)
	}
	info, err := doCtx(ctx, m, "INFO", "replication")
	if err != nil {
		return err
	}
	want, err := strconv.ParseInt(testserver.InfoField(fmt.Sprint(info), "master_repl_offset"), 10, 64)
	if err != nil {
		return fmt.Errorf("master_repl_offset of %s: %v", master, err)
	}
	return poll(ctx, "replicas caught up", func(ctx context.Context) error {
		for _, s := range d.Replicas(master) {
			info, err := doCtx(ctx, s, "INFO", "replication")
			if err != nil {
				return err
			}
			got, _ := strconv.ParseInt(testserver.InfoField(fmt.Sprint(info), "slave_repl_offset"), 10, 64)
			if got < want {
				return fmt.Errorf("replica %s at offset %d, the master at %d", s.Addr, got, want)
			}
		}
		return nil
	})
}
