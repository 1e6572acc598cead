// Package aside is a cache-aside helper on respire's client-side cache: a
// value missing from Redis is loaded by a function of yours, stored in Redis
// with a TTL, and served from process memory until a write anywhere changes
// it.
//
// # Use
//
//	c, err := respire.Connect(ctx, respire.Options{Addr: addr, ClientCache: &respire.CacheOptions{}})
//	users, err := aside.New(c, aside.Options{TTL: time.Minute})
//	v, err := users.Get(ctx, "user:42", func(ctx context.Context, key string) (string, error) {
//		return db.LoadUser(ctx, 42) // runs once per miss in the process, however many callers
//	})
//
// # How it works
//
// Get reads the key with Client.Cached(TTL).Get: a hit costs no round trip
// and no allocation in respire. On a miss (the key is absent from Redis), the
// callers of that key in this process share one flight: the first starts the
// loader, the others wait for its result. The flight reads the key once more
// (another flight may have stored it meanwhile), runs the loader and stores
// its value with SET PX TTL; the waiters all get that value. The server
// tracks the keys read through the cache, so a write to the key by any
// client (a SET, a DEL, Cache.Delete, an expiry) drops the local copy, and
// the next Get reads or loads again.
//
// # Guarantees and limits
//
//   - One loader per key per process at a time: concurrent misses of a key
//     in one process call the loader once. Other processes have flights of
//     their own: N processes missing the same key at once call it up to N
//     times (each then stores its value; the last SET wins).
//   - An error of the loader is returned to every caller of its flight and
//     is not stored: the next Get runs the loader again.
//   - The loader runs with the first caller's context values but not its
//     cancellation, bounded by Options.LoadTimeout, so that one caller
//     giving up does not fail the others; a caller whose ctx ends stops
//     waiting and gets ctx's error.
//   - A value loaded from a source that changes while it is being loaded can
//     be stored after the change's invalidation (the classic cache-aside
//     race): it then stays until its TTL or the next write of the key. Keep
//     TTL as short as staleness allows, or delete the key after writing the
//     source (Cache.Delete), which drops every process's copy.
//   - Values are strings: encode other types yourself (package codec/typed
//     has codecs). An absent value must be encoded too (an empty string, a
//     marker) if it should be cached; a loader error is never cached.
//   - The client needs Options.ClientCache; without it New fails with an
//     error wrapping ErrInvalidOption and respire.ErrCacheDisabled.
package aside
