// Package goredis lets libraries written for go-redis
// (github.com/redis/go-redis/v9) run on a Respire client.
//
// New wraps a *respire.Client in a *Client, which embeds a *redis.Client
// and so satisfies redis.UniversalClient, redis.Cmdable and redis.Scripter:
//
//	rc, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
//	...
//	rdb := goredis.New(rc)
//	defer rdb.Close() // the go-redis side; rc stays open
//	locker := redislock.New(rdb)
//
// The embedded go-redis client never reaches a server itself. go-redis
// builds each command as usual; a hook hands its words to Respire (the EVAL
// family through Respire's Eval methods, so that a cluster routes them by
// key, GET through its typed Get, everything else through Client.Do) and
// stores the reply in the
// command as go-redis would: a null is redis.Nil (false for a BoolCmd, as
// go-redis reads SET ... NX), an error reply an *Error whose Error method is
// the server's message and which has go-redis's RedisError method, so that
// redis.HasErrorPrefix(err, "NOSCRIPT") and the libraries' fallback from
// EVALSHA to EVAL work, and errors.As finds go-redis's own error value in it
// (redis.IsReadOnlyError and its kin). Other errors (context, connection)
// are Respire's, unchanged. Arguments are encoded as go-redis encodes them
// (a time.Duration as nanoseconds, a time.Time in RFC 3339, a
// BinaryMarshaler by its bytes).
//
// Libraries tested on it (tests/ecosystem in the repository):
//
//	Library                                  Version tested   Through
//	github.com/bsm/redislock                 v0.9.4           New(rc) as redislock.RedisClient
//	github.com/go-redis/redis_rate/v10       v10.0.1          redis_rate.NewLimiter(New(rc))
//	github.com/go-redis/cache/v9             v9.0.0           cache.Options{Redis: New(rc)}
//	github.com/go-redsync/redsync/v4         v4.18.1          goredis/v9.NewPool(New(rc))
//
// # Every reply type
//
// The common reply types (Cmd, StatusCmd, StringCmd, IntCmd, UintCmd,
// BoolCmd, FloatCmd, DurationCmd, TimeCmd, SliceCmd, BoolSliceCmd,
// StringSliceCmd, IntSliceCmd, FloatSliceCmd, MapStringStringCmd,
// MapStringIntCmd, ScanCmd, ZSliceCmd, XMessageSliceCmd) are filled with
// go-redis's setters. Every other one (the other stream replies, geo,
// FUNCTION LIST, INFO, COMMAND, ...) is replayed: the reply Respire
// received is encoded back into RESP as the server sent it and read by
// go-redis's own code, from one of the adapter's connections, which reach
// no server. The command holds what go-redis would have given, nested
// errors and RESP3 types included.
//
// # Pub/sub, Watch, Conn
//
// Subscribe, PSubscribe and SSubscribe return go-redis PubSubs whose
// subscriptions live in a respire.Subscription (resubscribed by Respire
// after a reconnect). Watch runs on Respire's Watch; the *redis.Tx's
// TxPipelined executes on the watching connection and fails with
// redis.TxFailedErr when a watched key changed. Conn has a connection of
// its own (Respire's WithConn) until Close, on which commands that change a
// connection's state (SELECT, CLIENT SETNAME) are allowed. On the client
// itself they are refused by Respire's Do with an *respire.ArgError (use
// Options.DB, Options.ClientName, Options.OnConnect, or a Conn).
//
// # Cluster-shaped programs
//
// ForEachShard, ForEachMaster, ForEachSlave, MasterForKey and SlaveForKey
// have the signatures of *redis.ClusterClient's, so that a program written
// against them (through an interface, or a redis.UniversalClient) runs on a
// Respire cluster client. fn gets a *redis.Client per node, whose commands
// run on a *respire.Client the adapter made for that node alone, cached by
// address and closed by Close.
//
// # Limits
//
// On a cluster, SCAN is refused (one node would answer): use ForEachMaster
// with a SCAN on each primary, or the *respire.Client's ScanAll. go-redis's own options (timeouts, retries,
// pool sizes) do not apply: Respire's Options do; Options and PoolStats
// describe the Respire client. Credentials show as xxxxx wherever Respire
// renders a command (its tracer, interceptors and errors); go-redis's own
// Cmd.String shows the arguments as given. ErrNotSupported is wrapped by
// the errors of what the adapter cannot do (an argument it cannot encode,
// SCAN on a cluster).
//
// docs/ecosystem.md in the repository has the tested versions and details.
package goredis
