package topology

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNearest(t *testing.T) {
	p, r1, r2 := &Node{Addr: "p"}, &Node{Addr: "r1"}, &Node{Addr: "r2"}
	sh := &shard{primary: p, replicas: []*Node{r1, r2}}
	// Nothing measured: a replica.
	for range 20 {
		assert.NotSame(t, p, nearest(sh))
	}
	p.observe(300 * time.Microsecond)
	r1.observe(200 * time.Microsecond)
	r2.observe(900 * time.Microsecond)
	assert.Same(t, r1, nearest(sh), "lowest round trip")
	r1.observe(failedRTT)
	assert.Same(t, p, nearest(sh), "a failed PING moves reads off the node")
	r1.observe(100 * time.Microsecond)
	assert.Equal(t, 100*time.Microsecond, r1.RTT(), "an answer after a failure replaces the failure")
	r1.observe(500 * time.Microsecond)
	assert.Equal(t, 200*time.Microsecond, r1.RTT(), "a quarter weight to a new sample")
	r1.suspect.Store(time.Now().Add(time.Minute).UnixNano())
	assert.Same(t, p, nearest(sh), "a suspected node is avoided")
	p.suspect.Store(time.Now().Add(time.Minute).UnixNano())
	r2.suspect.Store(time.Now().Add(time.Minute).UnixNano())
	assert.Same(t, r1, nearest(sh), "all suspected: the lowest round trip")
	// Only the primary measured, the replicas not yet and not suspected.
	sh2 := &shard{primary: &Node{}, replicas: []*Node{{}}}
	sh2.primary.observe(time.Millisecond)
	assert.Same(t, sh2.primary, nearest(sh2))
}
