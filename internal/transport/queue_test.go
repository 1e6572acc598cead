package transport

import "testing"

// BenchmarkFifo pushes and pops a batch of 32 requests, as a pipeline of
// 32 commands does on a connection's pending queue.
func BenchmarkFifo(b *testing.B) {
	var q fifo
	rs := make([]Request, 32)
	for b.Loop() {
		for i := range rs {
			q.push(&rs[i])
		}
		for range rs {
			if q.pop() == nil {
				b.Fatal("empty")
			}
		}
	}
}

// TestFifoOrder checks that the ring keeps its order across growth and
// wrap-around.
func TestFifoOrder(t *testing.T) {
	var q fifo
	rs := make([]Request, 300)
	next, want := 0, 0
	for round := 0; round < 50; round++ {
		for range 7 + round%5 {
			q.push(&rs[next%len(rs)])
			next++
		}
		for range 5 {
			if r := q.pop(); r != &rs[want%len(rs)] {
				t.Fatalf("pop %d: got another request", want)
			}
			want++
		}
	}
	for q.size > 0 {
		if r := q.pop(); r != &rs[want%len(rs)] {
			t.Fatalf("pop %d: got another request", want)
		}
		want++
	}
	if want != next {
		t.Fatalf("popped %d of %d", want, next)
	}
}
