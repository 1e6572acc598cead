// Package respire is a Redis and Valkey client for Go: typed methods for
// every command, generated from the command spec, over a multiplexed
// transport that pipelines concurrent callers automatically.
//
// Start with Connect (or NewClient) and Options; ParseURL reads
// redis://, rediss:// and unix:// URLs:
//
//	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
//	if err != nil { ... }
//	defer c.Close()
//	if err := c.Set(ctx, "greeting", "hello", nil); err != nil { ... }
//	v, err := c.Get(ctx, "greeting") // errors.Is(err, respire.Nil) when missing
//
// Beyond single commands: NewBatch (an explicit pipeline with typed
// Futures), NewTx, Watch and WatchRetry (MULTI/EXEC, optimistic locking
// with TxFailed), NewScript (EVALSHA with a NOSCRIPT fallback), Subscribe,
// PSubscribe and SSubscribe (pub/sub with gap events when messages may have
// been lost), Cached (server-assisted client-side caching, with
// Options.ClientCache), and the Lease and Append forms of bulk-string reads
// (LeaseList for MGET, HMGET and LRANGE) for allocation-free hot paths. Blocking commands run on a pool of
// dedicated connections. zz_excluded.md lists the commands without a method.
//
// Do sends any command and returns a generic Reply. Errors from the server
// are *Error values with the command and the server's prefix
// ("respire: SET: WRONGTYPE ..."); a missing value is Nil;
// transport failures wrap ErrClosed, ErrUnavailable, a *ConnError or the
// context's error.
package respire
