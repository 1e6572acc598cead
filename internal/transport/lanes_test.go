package transport

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLaneRetiredWhenUnused: a batch that finds the routed connection busy
// opens a lane; once no batch has chosen the lane for LaneIdle, the Mux
// closes it without reporting an outage, and opens it again when batches
// need it.
func TestLaneRetiredWhenUnused(t *testing.T) {
	release := make(chan struct{})
	slowSeen := make(chan struct{}, 1)
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "SLOW":
			slowSeen <- struct{}{}
			<-release
		}
		return "+" + args[0] + "\r\n"
	})
	connected := make(chan struct{}, 8)
	var lost atomic.Int32
	m := NewMux(Config{
		Addr: p.Addr(), BatchLanes: 1, LaneIdle: 50 * time.Millisecond, HealthCheck: 20 * time.Millisecond,
		OnConnect:  func(ConnInfo) { connected <- struct{}{} },
		OnConnLost: func(string, error) func(int, error) { lost.Add(1); return nil },
	})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, m.Connect(ctx))
	<-connected

	batch := func() []*Request {
		rs := make([]*Request, minLaneBatch)
		for i := range rs {
			rs[i] = &newTestReq("B" + strconv.Itoa(i)).Request
		}
		return rs
	}
	// Keep the routed connection busy, then send a batch: it warms the
	// lane and, the lane not being up yet, waits behind SLOW.
	openLane := func() {
		slow := make(chan error, 1)
		go func() { slow <- m.Do(ctx, &newTestReq("SLOW").Request) }()
		<-slowSeen
		done := make(chan error, 1)
		go func() { done <- m.DoMulti(ctx, batch()) }()
		select {
		case <-connected:
		case <-ctx.Done():
			t.Fatal("the lane was not dialed")
		}
		close(release)
		require.NoError(t, <-slow)
		require.NoError(t, <-done)
		release = make(chan struct{})
	}
	openLane()
	require.Equal(t, 1, m.OpenLanes())

	// No event marks the close: look every few milliseconds.
	deadline := time.Now().Add(5 * time.Second)
	for m.OpenLanes() != 0 {
		require.True(t, time.Now().Before(deadline), "the unused lane was not closed")
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, int32(0), lost.Load(), "closing an unused lane is not an outage")
	require.Equal(t, 1, m.Open(), "the routed connection stays")
	require.Empty(t, connected, "no lane dialed again by itself")

	openLane()
	require.Equal(t, 1, m.OpenLanes(), "batches open it again")
}
