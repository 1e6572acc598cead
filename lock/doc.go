// Package lock is a distributed mutual-exclusion lock on one Redis or Valkey
// deployment (a single server, a Sentinel-watched primary or a cluster), with
// fencing tokens, built on package respire's public API.
//
// # Use
//
// Create a Locker over a respire.Client, then Lock (wait) or TryLock (fail
// at once with ErrNotAcquired) by name:
//
//	n := lock.NewNotifier()
//	opts.ClientCache = &respire.CacheOptions{}
//	opts.Tracer = n.Tracer(opts.Tracer)
//	c, err := respire.Connect(ctx, opts)
//	locker, err := lock.New(c, lock.Options{TTL: 10 * time.Second, Notifier: n})
//	l, err := locker.Lock(ctx, "invoice:42")
//	defer l.Release(ctx)
//	err = store.Write(ctx, data, l.Token()) // the store refuses tokens older than the newest it saw
//
// A lock is a key, Prefix+"{"+name+"}", holding a random owner string and
// expiring after the TTL; it is taken with SET NX PX and released or
// refreshed by a script that acts only if the key still holds the owner's
// string, so a holder whose lock expired and was taken by another cannot
// release or extend the other's lock (ErrNotHeld).
//
// # Fencing tokens
//
// Each acquisition increments a counter (INCR on Prefix+"{"+name+"}:fence",
// in the lock key's hash slot, in the same script as the SET NX, so both or
// neither happen) and returns its new value as Lock.Token. Tokens of one
// name are strictly increasing as long as the counter survives. A lock can
// end without its holder knowing (the TTL ran out during a garbage
// collection pause, a stalled network, a suspended VM), and a stale holder
// may then still write. Mutual exclusion that must hold for correctness
// therefore needs the protected resource to check the token: it remembers
// the highest token it accepted and refuses a write with a lower one. Without
// such a check the lock is an efficiency device (it makes duplicate work
// rare), not a safety guarantee.
//
// # Waiting without polling
//
// A waiter that finds the lock taken reads the lock key through the
// client-side cache (Client.Cached), which asks the server to track it; the
// server then sends an invalidation as soon as the key is deleted, expires
// or changes, and the Notifier, installed as the client's
// Tracer.CacheInvalidate, wakes the waiters of that key, which try again.
// The key's remaining TTL, returned by the failed attempt, also arms a timer,
// in case the expiry's invalidation is late (the server notices an expired
// key when it is touched or when its expiry cycle samples it, normally within
// 100 ms) or never comes. The tracking connection breaking, a FLUSHALL or a
// Sentinel switch flush the cache and wake every waiter. So a waiter sends a
// command when the lock may have become free, not at an interval.
//
// Respire reports invalidations to Tracer.CacheInvalidate on every kind of
// deployment: a single server, Sentinel and a cluster (each node's tracking
// connection). Without a Notifier (Options.Notifier nil) the Locker
// subscribes to a pub/sub channel (Options.Channel) to which every
// release publishes the lock's key, and relies on the timer for locks that
// expire; a lock key changed by anything other than this package then wakes
// nobody until its TTL runs out. A public per-key hook in respire (a
// "wait for the invalidation of this cached key", on every topology) would
// let the Locker drop the channel and the Tracer wiring altogether.
//
// # Cost
//
// TryLock and Release are one script call each. On a client with
// Options.ClientCache (which the Notifier needs) respire follows every
// script with a PING on its tracking connections, since it cannot tell
// which keys a script wrote; that doubles the round trips of an
// uncontended lock (4 instead of 2 for a take and release). A client
// without the cache, woken through the channel, pays 2.
//
// # Guarantees and limits
//
//   - Safety (at most one holder at a time) holds while the deployment's
//     primary for the key keeps its data: a single server that does not
//     restart without persistence, a primary that does not fail over.
//   - Replication is asynchronous. A lock acquired on a primary that fails
//     over before the SET reached a replica is lost: the promoted replica has
//     no lock key, and a second client can acquire the same lock. The same
//     failover can also lose INCRs of the fence counter, so the promoted
//     replica may hand out a token already given; a storage layer that
//     refuses tokens lower than or equal to the last it accepted still
//     rejects the second holder's writes only if that token is not higher
//     than the first's. Sentinel and cluster failovers are both concerned; a
//     server restarted without persistence (or with AOF everysec) too.
//     Running WAIT after acquiring narrows, but does not close, the window.
//   - Liveness: a lock is freed when it is released or when its TTL runs out;
//     a holder that dies keeps others waiting for at most the TTL. Waiters are
//     not served in order (no fairness): after a release, whichever waiter's
//     SET NX arrives first wins.
//   - Clocks: the TTL is measured by the server's clock; the Locker does not
//     need synchronized wall clocks. Lock.Deadline is the local monotonic time
//     taken before the acquiring command was sent, plus the TTL: a holder that
//     stops using the lock before it passes is safe as long as the server's
//     clock does not run faster than the client's (drift is assumed small
//     against the TTL) and the server is not suspended and resumed with a jump.
//   - This is not Redlock: it uses one deployment, not a majority of
//     independent servers. A cluster gives scale (locks spread over slots),
//     not stronger safety: each lock lives on one primary and its replicas.
package lock
