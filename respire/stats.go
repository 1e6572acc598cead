package respire

import (
	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/transport"
)

// Stats are counters of a client's multiplexed connections (see
// Client.Stats), for measuring how well pipelining works: replies per read,
// bytes per read, sends per write. They count since each connection was
// opened: a reconnect starts its connection's counters again.
type Stats struct {
	// Reads is the number of reads that returned data to the reply parser,
	// Bytes the bytes they returned and Replies the replies parsed from
	// them: Replies/Reads is the number of replies one parse pass found.
	Reads, Bytes int64
	Replies      uint64
	// Sends is the number of requests handed to the writer (a command, or
	// a whole batch); Writes the write system calls that carried them:
	// Sends/Writes is how many requests one write coalesced.
	Sends, Writes uint64
	// SocketReads and SocketBytes count reads from the sockets. They equal
	// Reads and Bytes unless Options.Filler is FillerOn: then a filler goroutine
	// reads the socket ahead of the parser, and Reads counts the parser's
	// reads from what the filler gathered.
	SocketReads, SocketBytes int64
}

func (s *Stats) add(t transport.Stats) {
	s.Reads += t.Reads
	s.Bytes += t.Bytes
	s.Replies += t.Replies
	s.Sends += t.Sends
	s.Writes += t.Writes
	s.SocketReads += t.SocketReads
	s.SocketBytes += t.SocketBytes
}

// Stats returns counters of the client's multiplexed connections (socket
// reads, bytes, replies), for measuring how many replies each read
// carries; on a cluster, summed over the nodes.
func (c *Client) Stats() Stats {
	var st Stats
	c.be.eachPool(func(m *transport.Mux, _ *transport.BlockingPool) { st.add(m.Stats()) })
	return st
}

// CacheStats are the counters of the client-side cache (see
// Client.CacheStats).
type CacheStats struct {
	// Hits and Misses count cached reads answered from the cache and
	// reads that had to ask the server.
	Hits, Misses int64
	// Evictions counts entries dropped to make room within MaxBytes.
	Evictions int64
	// Invalidations counts keys the server invalidated while the cache
	// held an entry for them.
	Invalidations int64
	// Flushes counts the times the whole cache was emptied: FlushCache, a
	// tracking connection lost (whose invalidations may have been missed),
	// a flush on the server.
	Flushes int64
	// Bytes is the memory the entries use, as the cache accounts it (keys,
	// values and bookkeeping); MaxBytes the bound it keeps Bytes under.
	Bytes, MaxBytes int64
	// Entries is the number of cached values.
	Entries int64
}

func cacheStats(s cache.Stats) CacheStats {
	return CacheStats{
		Hits:          s.Hits,
		Misses:        s.Misses,
		Evictions:     s.Evictions,
		Invalidations: s.Invalidations,
		Flushes:       s.Flushes,
		Bytes:         s.Bytes,
		MaxBytes:      s.MaxBytes,
		Entries:       s.Entries,
	}
}
