package hist

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestIndexRoundTrip(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 63, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<40 + 12345, 1<<63 + 1} {
		i := index(v)
		if i < prev || i >= buckets {
			t.Fatalf("index(%d) = %d after %d (buckets %d)", v, i, prev, buckets)
		}
		prev = i
		mid := value(i)
		if d := float64(mid) - float64(v); d > float64(v)/subCount+1 || -d > float64(v)/subCount+1 {
			t.Fatalf("value(index(%d)) = %d, off by more than 1/%d", v, mid, subCount)
		}
	}
}

func TestQuantileMatchesSortedSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h, a, b H
	var samples []time.Duration
	for i := range 100000 {
		d := time.Duration(r.ExpFloat64() * 30e3) // ~30µs mean, long tail
		samples = append(samples, d)
		h.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	slices.Sort(samples)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := samples[int(q*float64(len(samples)))-1]
		for _, x := range []*H{&h, &a} {
			got := x.Quantile(q)
			if diff := float64(got-want) / float64(want); diff > 0.02 || diff < -0.02 {
				t.Errorf("q%.3f = %v, sorted samples say %v", q, got, want)
			}
		}
	}
	if h.Count() != 100000 || a.Count() != h.Count() || a.Max() != h.Max() {
		t.Errorf("count/max: %d %d %v %v", h.Count(), a.Count(), h.Max(), a.Max())
	}
}
