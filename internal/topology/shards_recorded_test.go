package topology

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorded is a cluster as tests/scaleout's TestRecordTopologyReplies
// wrote it beside the replies it recorded (FLAVOR.json): the truth taken
// from the servers without this package's parser.
type recorded struct {
	From        string `json:"from"`
	ShardsZones bool   `json:"shards_zones"`
	Shards      []struct {
		Ranges   [][2]int       `json:"ranges"`
		Primary  recordedNode   `json:"primary"`
		Replicas []recordedNode `json:"replicas"`
	} `json:"shards"`
}

type recordedNode struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
	Zone string `json:"zone"`
}

// The flavors whose replies are in testdata.
var recordedFlavors = []string{"redis-7.0", "redis-8.0", "redis-8.6", "valkey-8.1", "valkey-9.1"}

// Every recorded CLUSTER SHARDS and CLUSTER SLOTS reply, RESP2 and RESP3,
// parses into the cluster the servers described: ranges, primaries,
// replicas, and zones where the reply carries them (Valkey 9.1; Valkey 8.1
// has zones configured but reports them only in HELLO).
func TestParseRecordedReplies(t *testing.T) {
	for _, f := range recordedFlavors {
		b, err := os.ReadFile(filepath.Join("testdata", f+".json"))
		require.NoError(t, err)
		var want recorded
		require.NoError(t, json.Unmarshal(b, &want))
		require.Len(t, want.Shards, 3, f)
		for _, sub := range []string{"shards", "slots"} {
			for _, proto := range []string{"resp2", "resp3"} {
				name := f + "-" + sub + "-" + proto + ".resp"
				t.Run(name, func(t *testing.T) {
					raw, err := os.ReadFile(filepath.Join("testdata", name))
					require.NoError(t, err)
					v := value(t, string(raw))
					var got *View
					if sub == "shards" {
						got, err = ParseShards(v, false, want.From)
					} else {
						got, err = ParseSlots(v, want.From)
					}
					require.NoError(t, err)
					require.Len(t, got.Shards, len(want.Shards))
					covered := 0
					for _, w := range want.Shards {
						i := slices.IndexFunc(got.Shards, func(s Shard) bool { return s.Primary.ID == w.Primary.ID })
						require.GreaterOrEqual(t, i, 0, "primary %s missing", w.Primary.ID)
						g := got.Shards[i]
						assert.Equal(t, w.Primary.Addr, g.Primary.Addr)
						assert.True(t, g.Primary.Primary && g.Primary.Healthy)
						assert.ElementsMatch(t, w.Ranges, g.Ranges)
						for _, r := range g.Ranges {
							covered += r[1] - r[0] + 1
						}
						require.Len(t, g.Replicas, len(w.Replicas))
						zone := func(n recordedNode) string {
							if want.ShardsZones {
								return n.Zone
							}
							return ""
						}
						assert.Equal(t, zone(w.Primary), g.Primary.Zone, "primary's zone")
						for _, wr := range w.Replicas {
							j := slices.IndexFunc(g.Replicas, func(n NodeInfo) bool { return n.ID == wr.ID })
							require.GreaterOrEqual(t, j, 0, "replica %s missing", wr.ID)
							assert.Equal(t, wr.Addr, g.Replicas[j].Addr)
							assert.Equal(t, zone(wr), g.Replicas[j].Zone, "replica's zone")
							assert.False(t, g.Replicas[j].Primary)
						}
					}
					assert.Equal(t, SlotCount, covered)
				})
			}
		}
	}
}
