package goredis

import (
	"math"

	"github.com/redis/go-redis/v9"
)

// PoolStats maps Respire's connection counts onto go-redis's pool
// statistics, for the metrics and tests that read them:
//
//   - TotalConns: every connection the Respire client holds
//     (respire.PoolStats.Open): multiplexed, batch, blocking pool,
//     subscriber and client-side cache connections, on every node;
//   - IdleConns: the connections ready for a command: the multiplexed
//     ones (shared, never checked out) and the idle ones of the blocking
//     pool;
//   - Hits: the requests handed to the multiplexed connections
//     (respire.Stats.Sends), each of which found a connection ready;
//   - PubSubStats.Active: the subscriber connection, when up.
//
// Misses, Timeouts, WaitCount and WaitDurationNs stay 0: a command waits
// for no connection in Respire (a blocking command or Watch beyond
// Options.BlockingPoolSize fails at once with respire.ErrPoolExhausted).
func (a *Client) PoolStats() *redis.PoolStats {
	if a.rc == nil {
		return &redis.PoolStats{}
	}
	ps := a.rc.PoolStats()
	st := a.rc.Stats()
	out := &redis.PoolStats{
		Hits:       clamp32(st.Sends),
		TotalConns: clamp32(uint64(ps.Open())),
		IdleConns:  clamp32(uint64(ps.Multiplexed + ps.BlockingIdle)),
	}
	out.PubSubStats.Active = clamp32(uint64(ps.PubSub))
	return out
}

func clamp32(n uint64) uint32 {
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

// Options describes the client as go-redis code reads it: the address of
// the server Respire talks to (a seed's, on a cluster), its database,
// user, client name, protocol and TLS configuration, from the Respire
// client's Options. Changing the returned value changes nothing: Respire's
// Options govern the connections.
func (a *Client) Options() *redis.Options {
	o := *a.Client.Options()
	if a.rc == nil {
		return &o
	}
	ro := a.rc.Options()
	o.Addr = a.addr()
	if ro.Network != "" {
		o.Network = ro.Network
	}
	o.DB = ro.DB
	o.Username = ro.Username
	o.Password = ro.Password
	o.ClientName = ro.ClientName
	o.TLSConfig = ro.TLSConfig
	o.Protocol = a.proto
	o.Dialer = nil
	if ro.DialTimeout > 0 {
		o.DialTimeout = ro.DialTimeout
	}
	return &o
}
