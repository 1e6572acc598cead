package respire

import (
	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Limits bound what a broken or hostile server can make the client read
// (Options.Limits). A zero field takes its default; a reply past a limit
// breaks its connection with an error wrapping ErrProtocol, and no memory
// is spent on it beyond the limit.
type Limits struct {
	// MaxBulk is the largest bulk string, bulk error or verbatim string
	// accepted, in bytes. Default 512 MiB (the server's own
	// proto-max-bulk-len).
	MaxBulk int
	// MaxAggregate is the largest number of elements of one array, set or
	// push, or of pairs of one map or attribute. Default 1<<24.
	MaxAggregate int
	// MaxLine is the longest line accepted for simple strings, simple
	// errors, integers, doubles, big numbers and length headers. Default
	// 64 KiB.
	MaxLine int
	// MaxDepth is the deepest nesting of aggregates accepted. Default 128.
	MaxDepth int
	// MaxNodes bounds the number of values in one reply. Default 1<<26.
	MaxNodes int
}

// reader returns l as the reader's limits.
func (l Limits) reader() resp.Limits {
	return resp.Limits{MaxBulk: l.MaxBulk, MaxAggregate: l.MaxAggregate, MaxLine: l.MaxLine, MaxDepth: l.MaxDepth, MaxNodes: l.MaxNodes}
}

// CachePolicy chooses which entry a full shard of the client-side cache
// evicts (CacheOptions.Policy).
type CachePolicy uint8

const (
	// CacheS3FIFO is the default. New entries enter a small FIFO; those
	// hit again while there move to a main FIFO, where a small hit
	// counter buys extra rounds; keys evicted from the small FIFO are
	// remembered (hashes only) so that they enter the main FIFO when they
	// come back. On a Zipf trace it keeps 3 to 7 more points of hit ratio
	// than CLOCK and LRU when the cache holds 10% or less of the keys.
	CacheS3FIFO CachePolicy = iota
	// CacheCLOCK is second chance: a hit sets a reference bit under the
	// shard's read lock; eviction gives referenced entries one more
	// round.
	CacheCLOCK
	// CacheLRU moves an entry to the back of its list on every hit, which
	// needs the shard's write lock: hits on one shard serialize.
	CacheLRU
)

// String returns the policy's name.
func (p CachePolicy) String() string { return p.store().String() }

// store returns p as the store's policy.
func (p CachePolicy) store() cache.Policy {
	switch p {
	case CacheCLOCK:
		return cache.CLOCK
	case CacheLRU:
		return cache.LRU
	}
	return cache.S3FIFO
}
