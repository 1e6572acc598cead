package topology

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idleSentinel is a watcher with no goroutine, for feeding it events.
func idleSentinel(master string) *Sentinel {
	s := &Sentinel{
		opts:     SentinelOptions{MasterName: "mymaster"},
		kick:     make(chan struct{}, 1),
		unfenced: make(chan struct{}),
		found:    make(chan struct{}),
		failed:   make(chan struct{}),
	}
	close(s.unfenced)
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.setMaster(master, "test")
	return s
}

func TestSentinelEvents(t *testing.T) {
	s := idleSentinel("10.0.0.1:6379")
	var switches []string
	s.opts.OnSwitch = func(old, addr string) { switches = append(switches, old+">"+addr) }
	assert.Equal(t, "10.0.0.1:6379", s.Master())
	assert.NoError(t, s.FenceCause())

	// Another master's events change nothing.
	s.event("a", "+sdown", "master other 10.0.0.1 6379")
	s.event("a", "+switch-master", "other 10.0.0.1 6379 10.0.0.9 6379")
	assert.False(t, s.Fenced())
	assert.Equal(t, "10.0.0.1:6379", s.Master())

	// A replica's sdown does not fence; the master's does, until the
	// switch, and says why meanwhile.
	s.event("a", "+sdown", "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379")
	assert.False(t, s.Fenced())
	s.event("a", "+sdown", "master mymaster 10.0.0.1 6379")
	assert.True(t, s.Fenced())
	require.Error(t, s.FenceCause())
	assert.Contains(t, s.FenceCause().Error(), "master 10.0.0.1:6379 is down (+sdown from sentinel a ")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.WaitUnfenced(ctx), context.DeadlineExceeded)

	s.event("b", "+promoted-slave", "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379")
	assert.False(t, s.Fenced())
	assert.Equal(t, "10.0.0.2:6379", s.Master())
	assert.NoError(t, s.FenceCause())
	require.NoError(t, s.WaitUnfenced(context.Background()))

	// The same switch announced again, and a late failover state about
	// the old master, change nothing.
	s.event("c", "+switch-master", "mymaster 10.0.0.1 6379 10.0.0.2 6379")
	s.event("b", "+failover-state-select-slave", "master mymaster 10.0.0.1 6379")
	assert.False(t, s.Fenced())
	assert.Equal(t, []string{"10.0.0.1:6379>10.0.0.2:6379"}, switches)

	// Malformed payloads are ignored.
	for _, p := range []string{"", "master", "mymaster 1 2", "slave x y z @ mymaster"} {
		s.event("a", "+switch-master", p)
		s.event("a", "+sdown", p)
		s.event("a", "+promoted-slave", p)
	}
	assert.Equal(t, "10.0.0.2:6379", s.Master())
	assert.Equal(t, int64(1), s.epoch)
}

func TestSentinelFields(t *testing.T) {
	assert.True(t, hasFlag("s_down,master,disconnected", "disconnected"))
	assert.False(t, hasFlag("master", "s_down", "o_down"))
	assert.False(t, hasFlag("master,s_down_x", "s_down"))
}

func TestSentinelWaitMasterTimesOut(t *testing.T) {
	s := NewSentinel(SentinelOptions{MasterName: "m", Addrs: []string{"127.0.0.1:1"}})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.WaitMaster(ctx)
	require.ErrorIs(t, err, ErrNoMaster)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `"m"`)
}

// TestSentinelHostnameAndIP: a sentinel with announce-hostnames names the
// master "localhost:6379", another 127.0.0.1:6379. The two are one node:
// no switch, and the master's failure fences whichever name reports it.
func TestSentinelHostnameAndIP(t *testing.T) {
	s := idleSentinel("localhost:6379")
	lookups := 0
	s.names.lookup = func(_ context.Context, host string) ([]string, error) {
		lookups++
		switch host {
		case "localhost", "alias":
			return []string{"127.0.0.1"}, nil
		}
		return nil, errors.New("no such host")
	}
	var switches []string
	s.opts.OnSwitch = func(old, addr string) { switches = append(switches, old+">"+addr) }

	assert.True(t, s.sameNode("localhost:6379", "127.0.0.1:6379"))
	assert.True(t, s.sameNode("LocalHost:6379", "localhost:6379"))
	assert.False(t, s.sameNode("localhost:6379", "127.0.0.1:6380"), "another port")
	assert.False(t, s.sameNode("localhost:6379", "alias:6379"), "two hostnames are two nodes")
	assert.False(t, s.sameNode("127.0.0.2:6379", "127.0.0.1:6379"))
	assert.False(t, s.sameNode("unknown:6379", "127.0.0.1:6379"))
	assert.True(t, s.sameNode("localhost:6379", "[::ffff:127.0.0.1]:6379"))
	assert.Equal(t, 2, lookups, "a name is resolved once, then remembered")

	s.event("a", "+switch-master", "mymaster localhost 6379 127.0.0.1 6379")
	assert.Empty(t, switches, "the same node under another name is no switch")
	assert.Equal(t, "localhost:6379", s.Master())
	s.event("a", "+sdown", "master mymaster 127.0.0.1 6379")
	assert.True(t, s.Fenced(), "the master's failure, named by IP address")
	s.event("b", "+switch-master", "mymaster 127.0.0.1 6379 localhost 6380")
	assert.False(t, s.Fenced())
	assert.Equal(t, []string{"localhost:6379>localhost:6380"}, switches)
	assert.Equal(t, "localhost:6380", s.spelled("127.0.0.1:6380", []string{"x:1", "localhost:6380"}))
}

// TestSentinelDiscoveryRefused: a discovery fails for good when a
// sentinel refused the client with a permanent handshake error and the
// others could not be reached; not when one of them answered otherwise.
func TestSentinelDiscoveryRefused(t *testing.T) {
	wrongPass := &transport.HandshakeError{Step: "HELLO", Err: transport.NewServerError("WRONGPASS invalid username-password pair")}
	refusedDial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	loading := &transport.HandshakeError{Step: "HELLO", Err: transport.NewServerError("LOADING loading the dataset")}
	for _, c := range []struct {
		name string
		errs []error
		want bool
	}{
		{"all wrong", []error{wrongPass, wrongPass}, true},
		{"no permission", []error{fmt.Errorf("SENTINEL GET-MASTER-ADDR-BY-NAME: %w", transport.NewServerError("NOPERM this user has no permissions to run the 'sentinel|get-master-addr-by-name' command")), refusedDial}, true},
		{"wrong and unreachable", []error{refusedDial, wrongPass}, true},
		{"unreachable", []error{refusedDial, refusedDial}, false},
		{"wrong and loading", []error{wrongPass, loading}, false},
		{"not monitored", []error{wrongPass, fmt.Errorf("%w: the sentinel does not monitor %q", ErrNoMaster, "m")}, false},
	} {
		assert.Equal(t, c.want, (&discoveryError{errs: c.errs}).refused(), c.name)
	}
	e := &discoveryError{addrs: []string{"a:1", "b:2", "c:3"}, errs: []error{wrongPass, refusedDial, wrongPass}}
	assert.Equal(t, "a:1, c:3: "+wrongPass.Error()+"; b:2: "+refusedDial.Error(), e.Error(), "each error once")
}

// TestSentinelWaitMasterRefused: WaitMaster returns a refused discovery
// at once, with the sentinel's error.
func TestSentinelWaitMasterRefused(t *testing.T) {
	s := idleSentinel("")
	wrongPass := &transport.HandshakeError{Step: "HELLO", Err: transport.NewServerError("WRONGPASS invalid username-password pair")}
	go s.failedDiscovery(&discoveryError{addrs: []string{"10.0.0.1:26379"}, errs: []error{wrongPass}})
	_, err := s.WaitMaster(context.Background())
	require.ErrorIs(t, err, ErrNoMaster)
	var he *transport.HandshakeError
	require.ErrorAs(t, err, &he)
	assert.True(t, he.Permanent())
	assert.Contains(t, err.Error(), "10.0.0.1:26379: ")
}

// TestSentinelEarlySwitch: a switch to a promoted replica before the
// sentinels name it (sentinel_promote.go) is undone when its failover's
// leader gives the failover up, and kept once the sentinels confirm it.
func TestSentinelEarlySwitch(t *testing.T) {
	const m1, m2, m3 = "10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"
	s := idleSentinel(m1)
	var switches []string
	s.opts.OnSwitch = func(old, addr string) { switches = append(switches, old+">"+addr) }
	s.storeReplicas([]string{m2, m3})
	promote := func() *provisional {
		t.Helper()
		require.Equal(t, m1, s.Master())
		s.event("a", "+try-failover", "master mymaster 10.0.0.1 6379")
		require.True(t, s.Fenced())
		assert.Contains(t, s.FenceCause().Error(), "master 10.0.0.1:6379 is being failed over (+try-failover from sentinel a ")
		s.event("a", "+failover-state-wait-promotion", "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379")
		require.True(t, s.Fenced())
		p := &provisional{old: m1, addr: m2, by: "a"}
		s.switchMaster(m2, "test", p)
		require.Equal(t, m2, s.Master())
		require.False(t, s.Fenced())
		assert.Equal(t, []string{m3}, s.Replicas(), "the promoted node is no replica")
		assert.Equal(t, p.epoch+1, s.epoch, "a newer configuration than the polls saw")
		return p
	}

	// The leader still failing the old master over: nothing changes; the
	// leader naming it in good health again: back to it.
	p := promote()
	s.checkProvisional(p, []string{"a", "b"}, []pollResult{{master: m1, healthy: false}, {master: m1, healthy: true}})
	assert.Equal(t, m2, s.Master())
	s.checkProvisional(p, []string{"a", "b"}, []pollResult{{master: m1, healthy: true}, {master: m1, healthy: true}})
	assert.Equal(t, m1, s.Master())
	assert.False(t, s.Fenced())
	assert.Equal(t, p.epoch, s.epoch)

	// Another sentinel's abort changes nothing; the leader's goes back.
	promote()
	s.event("b", "-failover-abort-slave-timeout", "master mymaster 10.0.0.1 6379")
	assert.Equal(t, m2, s.Master())
	s.event("a", "-failover-abort-slave-timeout", "master mymaster 10.0.0.1 6379")
	assert.Equal(t, m1, s.Master())
	assert.False(t, s.Fenced())

	// Confirmed by +promoted-slave: a late abort changes nothing.
	promote()
	s.event("a", "+promoted-slave", "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379")
	s.event("a", "-failover-abort-slave-timeout", "master mymaster 10.0.0.1 6379")
	assert.Equal(t, m2, s.Master())
	assert.Equal(t, []string{m1 + ">" + m2, m2 + ">" + m1, m1 + ">" + m2, m2 + ">" + m1, m1 + ">" + m2}, switches)

	// Not confirmed in time, writes wait again, until +switch-master.
	s.mu.Lock()
	s.prov = &provisional{old: m1, addr: m2, by: "a"}
	s.mu.Unlock()
	s.fence(true, "a", unconfirmed)
	require.True(t, s.Fenced())
	assert.Contains(t, s.FenceCause().Error(), "master 10.0.0.2:6379, promoted by the failover sentinel a announced, is not confirmed by the sentinels yet")
	s.event("b", "+switch-master", "mymaster 10.0.0.1 6379 10.0.0.2 6379")
	assert.False(t, s.Fenced())
	assert.Equal(t, m2, s.Master())
}

// TestFenceCauseNamesTheFencedMaster: the cause names the master the
// failover is about, also in the moment a switch to the promoted replica
// has changed Master and not yet lifted the fence. A write that checked
// the fence then named the new master as the one being failed over ("master
// B is being failed over; replica B is being promoted"), seen once in
// TestSentinelFailoverHold.
func TestFenceCauseNamesTheFencedMaster(t *testing.T) {
	s := idleSentinel("10.0.0.1:6379")
	s.event("a", "+try-failover", "master mymaster 10.0.0.1 6379")
	require.True(t, s.Fenced())
	promoted := "10.0.0.2:6379"
	s.master.Store(&promoted) // a switch's first step; the fence is lifted after
	require.True(t, s.Fenced())
	assert.Contains(t, s.FenceCause().Error(), "master 10.0.0.1:6379 is being failed over (+try-failover from sentinel a ")
}
