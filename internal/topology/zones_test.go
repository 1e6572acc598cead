package topology

import (
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/stretchr/testify/assert"
)

// inZone follows the documented order of each mode, skips suspected
// nodes, and counts a node without a zone as another zone.
func TestInZoneOrder(t *testing.T) {
	node := func(zone string) *Node {
		n := &Node{Mux: transport.NewMux(transport.Config{Addr: "127.0.0.1:1"})}
		t.Cleanup(func() { n.Mux.Close() })
		return n.withZone(zone)
	}
	c := &Cluster{opts: Options{Zone: "a"}}
	pa, pb := node("a"), node("b")
	ra, rb, rc, rnone := node("a"), node("b"), node("c"), node("")
	for _, tc := range []struct {
		name string
		sh   *shard
		rf   ReadFrom
		want []*Node // any of these, every time
	}{
		{"replica in zone", &shard{primary: pb, replicas: []*Node{rb, ra, rc}}, ReadZoneReplica, []*Node{ra}},
		{"replica in zone before primary in zone", &shard{primary: pa, replicas: []*Node{rb, ra}}, ReadZone, []*Node{ra}},
		{"other replicas before primary in zone", &shard{primary: pa, replicas: []*Node{rb, rc}}, ReadZoneReplica, []*Node{rb, rc}},
		{"primary in zone before other replicas", &shard{primary: pa, replicas: []*Node{rb, rc}}, ReadZone, []*Node{pa}},
		{"no zone is another zone", &shard{primary: pb, replicas: []*Node{rnone}}, ReadZone, []*Node{rnone}},
		{"no replica", &shard{primary: pb}, ReadZoneReplica, []*Node{pb}},
	} {
		for range 20 {
			assert.Contains(t, tc.want, c.inZone(tc.sh, tc.rf), tc.name)
		}
	}
	// A suspected replica in the zone is passed over.
	ra.suspect.Store(time.Now().Add(time.Minute).UnixNano())
	assert.Equal(t, pa, c.inZone(&shard{primary: pa, replicas: []*Node{ra, rb}}, ReadZone))
	rb.suspect.Store(time.Now().Add(time.Minute).UnixNano())
	assert.Equal(t, pb, c.inZone(&shard{primary: pb, replicas: []*Node{ra, rb}}, ReadZoneReplica))
	// Without a zone nothing is local: replicas first, as ReadPreferReplica.
	c.opts.Zone = ""
	assert.Equal(t, rc, c.inZone(&shard{primary: pa, replicas: []*Node{rc}}, ReadZone))
}
