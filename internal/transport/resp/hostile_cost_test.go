package resp

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHostileCostReport measures what the heaviest hostile inputs cost the
// reader before it rejects them, with the default limits: bytes allocated
// and time. docs/reliability.md quotes the table (go test -v -run
// TestHostileCostReport ./transport/resp).
func TestHostileCostReport(t *testing.T) {
	cases := []struct {
		name, in string
		maxAlloc uint64
	}{
		{"bulk declared 512 MiB, 100 KiB arrive", "$536870912\r\n" + strings.Repeat("x", 100<<10), 1 << 20},
		{"bulk declared 10 TB", "$9999999999999\r\n", 64 << 10},
		{"array declared 16M elements, 2 arrive", "*16777216\r\n:1\r\n:2\r\n", 64 << 10},
		{"map declared 16M pairs, 1 key arrives", "%16777216\r\n+k\r\n", 64 << 10},
		{"100,000 nested arrays", strings.Repeat("*1\r\n", 100_000) + ":1\r\n", 8 << 20},
		{"64 KiB line without CRLF", "+" + strings.Repeat("a", 70_000), 1 << 20},
		{"1M one-element pushes", strings.Repeat(">1\r\n:1\r\n", 1<<20), 32 << 20},
	}
	t.Log("| input | allocated | time | outcome |")
	t.Log("|---|--:|--:|---|")
	for _, c := range cases {
		var err error
		var d time.Duration
		n := allocatedBy(func() {
			start := time.Now()
			r := NewReader(strings.NewReader(c.in), Limits{})
			for err == nil {
				_, err = r.Next()
			}
			d = time.Since(start)
		})
		t.Logf("| %s | %d KiB | %v | %v |", c.name, n>>10, d.Round(10*time.Microsecond), err)
		assert.LessOrEqual(t, n, c.maxAlloc, c.name)
	}
}
