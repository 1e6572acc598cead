// Package hist is a small log-linear latency histogram in the spirit of
// HdrHistogram: recording is a few arithmetic operations and one increment,
// never an allocation, and quantiles are exact to within 1/64 (about 1.6%)
// of the value.
package hist

import (
	"math/bits"
	"time"
)

// subBits sets the precision: each power of two is split into 2^subBits
// equal buckets.
const (
	subBits  = 6
	subCount = 1 << subBits
	// Values below 2*subCount have a bucket each; above, bucket
	// subCount+shift*subCount+(mantissa-subCount) for a mantissa in
	// [subCount, 2*subCount) and shift = bits.Len64(v)-subBits-1.
	buckets = subCount + (64-subBits)*subCount
)

// H records durations in nanoseconds. The zero value is empty and ready.
// It is not safe for concurrent use: give each goroutine its own and Merge.
type H struct {
	counts [buckets]uint64
	n      uint64
	sum    uint64
	max    uint64
}

func index(v uint64) int {
	if v < 2*subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return subCount + shift*subCount + int(v>>shift) - subCount
}

// value is the middle of bucket i.
func value(i int) uint64 {
	if i < 2*subCount {
		return uint64(i)
	}
	shift := (i - subCount) / subCount
	m := uint64(subCount + (i-subCount)%subCount)
	return m<<shift + (uint64(1)<<shift)/2
}

// Record adds one duration; negative durations count as zero.
func (h *H) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[index(v)]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

// Merge adds o's records to h.
func (h *H) Merge(o *H) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of records.
func (h *H) Count() uint64 { return h.n }

// Mean is the average of the records.
func (h *H) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Max is the largest record.
func (h *H) Max() time.Duration { return time.Duration(h.max) }

// Quantile returns the value at quantile q in [0, 1]: the smallest bucket
// value with at least q of the records at or below it.
func (h *H) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(value(i), h.max))
		}
	}
	return time.Duration(h.max)
}
