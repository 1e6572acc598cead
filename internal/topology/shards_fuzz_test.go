package topology

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
)

// FuzzParseTopology feeds any reply to both parsers, seeded with the
// recorded replies: they may refuse it, never panic, and what they accept
// has slot ranges in bounds and a primary per shard.
func FuzzParseTopology(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.resp"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := resp.NewReader(bytes.NewReader(raw), resp.Limits{}).Next()
		if err != nil {
			return
		}
		v := m.Tree()
		for _, parse := range []func() (*View, error){
			func() (*View, error) { return ParseShards(v, true, "10.0.0.1:7000") },
			func() (*View, error) { return ParseSlots(v, "10.0.0.1:7000") },
		} {
			view, err := parse()
			if err != nil {
				continue
			}
			for _, sh := range view.Shards {
				if sh.Primary.ID == "" || sh.Primary.Addr == "" {
					t.Fatalf("shard without a primary: %+v", sh)
				}
				for _, r := range sh.Ranges {
					if r[0] < 0 || r[1] >= SlotCount || r[0] > r[1] {
						t.Fatalf("range %v", r)
					}
				}
			}
		}
	})
}
