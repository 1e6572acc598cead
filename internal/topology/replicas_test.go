package topology

import (
	"context"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport"
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
	require.Len(t, r.pick(false), 1)

	// A context that ends first ends the wait.
	r2 := NewReplicas(transport.Config{}, "")
	t.Cleanup(r2.Close)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r2.Connect(ctx)
	assert.Nil(t, r2.live.Load(), "no replicas known yet")
}
