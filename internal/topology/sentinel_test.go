package topology

import (
	"context"
	"testing"
	"time"

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
	assert.Equal(t, "10.0.0.1:6379", s.Resolve())

	// Another master's events change nothing.
	s.event("a", "+sdown", "master other 10.0.0.1 6379")
	s.event("a", "+switch-master", "other 10.0.0.1 6379 10.0.0.9 6379")
	assert.False(t, s.Fenced())
	assert.Equal(t, "10.0.0.1:6379", s.Master())

	// A replica's sdown does not fence; the master's does, until the
	// switch, and Resolve gives nothing meanwhile.
	s.event("a", "+sdown", "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379")
	assert.False(t, s.Fenced())
	s.event("a", "+sdown", "master mymaster 10.0.0.1 6379")
	assert.True(t, s.Fenced())
	assert.Equal(t, "", s.Resolve())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.WaitUnfenced(ctx), context.DeadlineExceeded)

	s.event("b", "+promoted-slave", "slave 10.0.0.2:6379 10.0.0.2 6379 @ mymaster 10.0.0.1 6379")
	assert.False(t, s.Fenced())
	assert.Equal(t, "10.0.0.2:6379", s.Resolve())
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
