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
// The embedded go-redis client never dials. go-redis builds each command as
// usual; a hook hands its words to Respire (the EVAL family through
// Respire's Eval methods, so that a cluster routes them by key, everything
// else through Client.Do) and stores the reply in the command as go-redis
// would: a null is redis.Nil (false for a BoolCmd, as go-redis reads
// SET ... NX), an error reply an *Error whose Error method is the server's
// message and which has go-redis's RedisError method, so that
// redis.HasErrorPrefix(err, "NOSCRIPT") and the libraries' fallback from
// EVALSHA to EVAL work. Other errors (context, connection) are Respire's,
// unchanged. Arguments are encoded as go-redis encodes them (a
// time.Duration as nanoseconds, a time.Time in RFC 3339, a
// BinaryMarshaler by its bytes).
//
// # What works
//
//	Library                                  Version tested   Through
//	github.com/bsm/redislock                 v0.9.4           New(rc) as redislock.RedisClient
//	github.com/go-redis/redis_rate/v10       v10.0.1          redis_rate.NewLimiter(New(rc))
//	github.com/go-redis/cache/v9             v9.0.0           cache.Options{Redis: New(rc)}
//	github.com/go-redsync/redsync/v4         v4.18.1          goredis/v9.NewPool(New(rc))
//
// Commands whose go-redis reply type is one of Cmd, StatusCmd, StringCmd,
// IntCmd, UintCmd, BoolCmd, FloatCmd, DurationCmd, TimeCmd, SliceCmd,
// BoolSliceCmd, StringSliceCmd, IntSliceCmd, FloatSliceCmd,
// MapStringStringCmd, MapStringIntCmd, ScanCmd and ZSliceCmd work, on a
// single server and on a cluster. Pipelines (Pipeline, Pipelined) run as a
// respire.Batch, MULTI/EXEC pipelines (TxPipeline, TxPipelined) as a
// respire.Tx. Hooks added with AddHook run around the adapter.
//
// # What does not
//
// go-redis fills its commands with unexported methods, so the adapter can
// only set the reply types it knows. A command with any other reply type
// (XRead's XStreamSliceCmd, GeoPos, ClusterSlots, InfoCmd, ...) fails with
// an error wrapping ErrNotSupported before anything is sent; use the
// *respire.Client's typed method instead. So does every feature that needs
// a go-redis connection of its own: Subscribe and its kin and Watch (use
// Respire's Subscribe and Watch). Conn returns a go-redis Conn whose
// commands run on Respire's shared connections like any other, not on a
// connection of their own: commands that would change a connection's state
// (SELECT, CLIENT SETNAME, CLIENT NO-EVICT, CLIENT REPLY, ...) are refused by
// Respire's Do with an *respire.ArgError, there as everywhere (use
// Respire's Options.DB, Options.ClientName, Options.OnConnect or
// WithConn). go-redis's own options (timeouts, retries, pool sizes) do not
// apply: Respire's Options do. As in go-redis, a generic Cmd holds a RESP3
// big number as a *big.Int and a map as a map[interface{}]interface{}.
// Credentials show as xxxxx wherever Respire renders a command (its
// tracer, interceptors and errors); go-redis's own Cmd.String shows the
// arguments as given.
//
// docs/ecosystem.md in the repository has the tested versions and details.
package goredis
