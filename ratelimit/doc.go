// Package ratelimit is a rate limiter on Redis or Valkey using the generic
// cell rate algorithm (GCRA), one script call (one round trip) per decision,
// built on package respire's public API.
//
// # Use
//
//	limiter, err := ratelimit.New(c, ratelimit.Options{})
//	res, err := limiter.Allow(ctx, "api:user:42", ratelimit.PerSecond(10, 20))
//	if !res.Allowed {
//		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
//	}
//
// # The algorithm
//
// A Limit of Rate requests per Period lets one request through every
// emission interval T = Period/Rate, with a tolerance of Burst intervals: up
// to Burst requests at once after a quiet spell, then one per T. The key
// holds one number, the theoretical arrival time (TAT): when the bucket will
// be empty again. A request of cost n is allowed when TAT + n*T - Burst*T is
// not after now; it then moves TAT to max(TAT, now) + n*T. The key expires
// when TAT passes, so an idle limit uses no memory. There are no windows:
// requests spread evenly, and a burst at the end of a second is not followed
// by a second burst at the start of the next (the flaw of fixed windows).
//
// Each decision is one EVALSHA (loaded on first use, reloaded after
// NOSCRIPT) on the limit's key alone, so on a cluster each key lives in its
// own slot and limits spread over the nodes. The script reads the server's
// clock (TIME), so clients need not agree on the time; Options.Now replaces
// it with the caller's clock (for tests, or to keep one clock across several
// servers). Times are counted in whole microseconds; T is rounded down to a
// microsecond.
//
// # Limits
//
// A limit lives on one primary: a failover that loses the key's last writes
// (asynchronous replication) forgets part of the consumed budget, letting at
// most one more burst through. Decisions with different Limits on one key
// mix: the stored TAT is interpreted with the Limit of each call.
package ratelimit
