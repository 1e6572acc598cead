// Package cache is the store behind Respire's server-assisted client-side
// cache: a sharded map from Redis keys to decoded replies, bounded by one
// byte budget for the whole client, with the bookkeeping that keeps a stale
// value from ever being stored.
//
// Start with [New] and [Store]. The package knows nothing of connections or
// commands: the respire package asks the server to track the keys it reads
// (CLIENT TRACKING) and turns the server's invalidation pushes into calls to
// [Store.Invalidate] and [Store.Flush].
//
// # Entries and variants
//
// Every entry belongs to one Redis key, because invalidations name keys. A
// key may hold several entries, one per kind of read: the plain string
// value (GET) and any number of named variants (an HGET of one field, an
// HGETALL). Invalidating the key drops them all.
//
// # Filling without a race
//
// A read that misses calls [Store.Begin] before it sends the command; the
// returned [Fill] records the key's generation. Invalidate and Flush bump
// the generations of keys with fills in flight. When the reply arrives the
// reader calls [Fill.Commit], which stores the value only if no
// invalidation of the key (and no flush) happened since Begin. Because the
// server sends an invalidation for every change it makes after it served
// the read, and the client applies those invalidations before or after the
// commit but never loses them, the cache never keeps a value older than
// the newest invalidation it has seen.
//
// # Invalidations never wait for hits
//
// A goroutine waiting for a shard's write lock parks, and on a machine
// whose processors are all busy with hits it runs again only when the
// scheduler gets round to it, with every invalidation behind it waiting
// too. So Invalidate takes the write lock only when it is free at once;
// otherwise it marks the key's entries dead under the read lock (hits skip
// them) or, when a writer holds the lock, records the key, and hits on
// that shard are misses until the next holder of the write lock has
// applied it. Config.Tick lets the owner apply the invalidations waiting
// on its connections from the hit path.
//
// # Memory bound and eviction
//
// MaxBytes bounds the sum of the sizes of all entries: key bytes, value
// bytes (as reported by the caller, who knows the value's shape) and a
// fixed bookkeeping cost per entry and per key that matches the Go memory
// layout of the store's structs and map slots. The budget is split evenly
// across shards so that a shard evicts under its own lock; a value larger
// than a shard's budget is not cached. The eviction policy is S3-FIFO by
// default, chosen by measurement over CLOCK and LRU (BenchmarkPolicy,
// BenchmarkHit): its hit path only bumps a small counter under a read
// lock, and it keeps a better hit ratio when the cache is small.
package cache
