package topology

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicasConnectWaitsForFirstSet: without a zone too, Connect returns
// only once the first set of replicas is known (the client's first reads
// then go to replicas, not to the primary for want of any), or when its
// context ends.
func TestReplicasConnectWaitsForFirstSet(t *testing.T) {
	r := NewReplicas(transport.Config{}, "")
	t.Cleanup(r.Close)
	done := make(chan struct{})
	go func() {
		r.Connect(context.Background())
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("Connect returned before the first set of replicas")
	case <-time.After(50 * time.Millisecond):
	}
	r.Set([]string{"127.0.0.1:1"})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Connect did not return after the first set of replicas")
	}
	require.Len(t, r.pick(false, false), 1)

	// A context that ends first ends the wait.
	r2 := NewReplicas(transport.Config{}, "")
	t.Cleanup(r2.Close)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r2.Connect(ctx)
	assert.Nil(t, r2.live.Load(), "no replicas known yet")
}

// TestReplicasDownTriedLast: a replica whose connection broke and whose
// process accepts connections without answering (as while it shuts down or
// starts) is tried after the others, not waited on by the reads that pick
// it, and is dialed again meanwhile; once it answers it serves reads again.
func TestReplicasDownTriedLast(t *testing.T) {
	var mute atomic.Bool
	serve := func(args []string) string {
		if mute.Load() {
			return ""
		}
		return replicaPeer(args)
	}
	a := testpeer.Start(t, serve)
	b := testpeer.Start(t, replicaPeer)
	// A dial's handshake that hangs fails only after DialTimeout.
	r := NewReplicas(transport.Config{DialTimeout: time.Minute}, "")
	t.Cleanup(r.Close)
	r.Set([]string{a.Addr(), b.Addr()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, x := range *r.live.Load() {
		require.NoError(t, x.mux.Connect(ctx))
	}
	byAddr := func(addr string) *replica {
		for _, x := range *r.live.Load() {
			if x.addr == addr {
				return x
			}
		}
		t.Fatalf("no replica %s", addr)
		return nil
	}
	ra := byAddr(a.Addr())

	mute.Store(true)
	a.CloseConns()
	// A read on it finds the connection closed (an idle connection is
	// read only when a call waits on it).
	pctx, pcancel := context.WithTimeout(ctx, time.Second)
	_ = ra.mux.Do(pctx, newPing())
	pcancel()
	require.Eventually(t, func() bool { return ra.mux.Open() == 0 }, 10*time.Second, time.Millisecond,
		"the client sees the connection to %s closed", a.Addr())
	for range 50 {
		got := r.pick(false, false)
		require.Len(t, got, 2)
		assert.Equal(t, b.Addr(), got[0].addr, "the replica that is down comes last")
	}
	// Where the primary may serve, a read that finds no other replica
	// does not wait on it: it comes back at once for the primary.
	// (Waiting, it would end with the context, long before the dial's
	// minute.)
	solo := &Replicas{}
	solo.live.Store(&[]*replica{ra})
	done, err := solo.Exec(ctx, &pingCmd{req: newPing()}, PickAnyThenPrimary)
	require.NoError(t, err)
	assert.False(t, done, "the read goes to the primary")

	// The picks dialed it: the dial hangs in its handshake.
	require.Eventually(t, func() bool { return a.Accepted() >= 2 }, 10*time.Second, time.Millisecond,
		"a new connection to the replica that is down")

	mute.Store(false)
	a.CloseConns() // the handshake that hung fails; the next one is answered
	require.Eventually(t, func() bool { return ra.mux.Open() == 1 }, 10*time.Second, time.Millisecond,
		"the replica is connected again")
	first := map[string]int{}
	for range 200 {
		first[r.pick(false, false)[0].addr]++
	}
	assert.Positive(t, first[a.Addr()], "the replica is picked first again: %v", first)
}

// replicaPeer answers a replica's handshake (HELLO, ROLE) and +OK to the
// rest.
func replicaPeer(args []string) string {
	switch args[0] {
	case "HELLO":
		return "%2\r\n+server\r\n+peer\r\n+proto\r\n:3\r\n"
	case "ROLE":
		return "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6379\r\n$9\r\nconnected\r\n:0\r\n"
	default:
		return "+OK\r\n"
	}
}

// ping is a PING request whose reply is dropped.
type ping struct{ transport.Request }

func (*ping) HandleReply(resp.Msg) {}
func (*ping) Recycle()             {}

func newPing() *transport.Request {
	p := &ping{}
	p.Init(p)
	p.SetPayload(resp.AppendCommand(nil, "PING"))
	return &p.Request
}

// pingCmd is a Command around a PING request.
type pingCmd struct{ req *transport.Request }

func (c *pingCmd) Req() *transport.Request          { return c.req }
func (c *pingCmd) Redirect(string) (Redirect, bool) { return Redirect{}, false }
func (c *pingCmd) ClearReply() error                { return nil }
func (c *pingCmd) Recycle()                         {}
