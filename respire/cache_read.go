package respire

// The internal surface of cached reads, which the hand-written methods in
// cache_cmds.go and the generated cached methods call.

import (
	"context"
	"errors"
	"time"

	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// cacheCmdCaching is CLIENT CACHING YES, which has no generated method
// (it steers the connection); only the cache sends it.
var cacheCmdCaching = cmdInfo{name: "CLIENT CACHING"}

// Cached is a view of a Client whose read methods are served from the
// client-side cache (Options.ClientCache) when they can be, and fill it
// when they cannot. Get one with Client.Cached; it is a small value, cheap
// to make for each call.
//
// Values are the caller's: a method returning a slice or a map returns a
// copy of the cached value on every hit (strings are shared, being
// immutable), so changing it does not change what the next read returns.
// Get and the other string, number and bool reads allocate nothing on a
// hit.
type Cached struct {
	c   *Client
	ttl time.Duration
}

// Cached returns the cached view of c. ttl bounds how long an entry read
// through it is kept locally, whatever the server says; 0 means
// Options.ClientCache.TTL. An entry never outlives its key's TTL on the
// server, and is dropped as soon as the server reports a change.
func (c *Client) Cached(ttl time.Duration) Cached { return Cached{c: c, ttl: ttl} }

func (v Cached) localTTL() time.Duration {
	if v.ttl > 0 {
		return v.ttl
	}
	return v.c.cache.opts.TTL
}

// run sends x, a read-only command on keys (all tracked), on the tracking
// connection chosen by x's route, in one write with what tracking needs:
//
//	CLIENT CACHING YES   (OPTIN mode: track the next command's keys)
//	x                    (the read)
//	PTTL key             (for each key: its TTL on the server)
//
// Any change to a key after x ran on the server is reported by an
// invalidation that arrives before the PTTL replies, so a TTL changed
// after the read spoils the fill rather than being missed. It returns the
// store's clock taken before sending and whether the auxiliary commands
// all succeeded (pttls then holds the TTLs in milliseconds, -1 for none,
// -2 for a missing key). before and after are sent right before x and
// after the PTTLs; the caller reads and recycles them. On error the
// transport owns x, before and after.
func (cc *clientCache) run(ctx context.Context, t *tracker, x *cmd, keys []string, pttls []int64, before, after []*cmd) (t0 int64, auxOK bool, err error) {
	var arr [8]*transport.Request
	rs := arr[:0]
	var caching *cmd
	if !cc.opts.Broadcast {
		caching = newCmd(&cacheCmdCaching)
		caching.arg("YES")
		caching.dec = cacheDecAny
		caching.seal()
		caching.Route = x.Route
		rs = append(rs, &caching.Request)
	}
	for _, b := range before {
		rs = append(rs, &b.Request)
	}
	x.seal()
	rs = append(rs, &x.Request)
	var auxArr [4]*cmd
	aux := auxArr[:0]
	for _, k := range keys {
		p := newCmd(&cmdPTTL)
		p.arg(k)
		p.dec = cacheDecInt
		p.seal()
		aux = append(aux, p)
		rs = append(rs, &p.Request)
	}
	for _, a := range after {
		rs = append(rs, &a.Request)
	}
	t0 = cc.store.Now()
	if err := t.mux.DoMulti(ctx, rs); err != nil {
		return t0, false, err
	}
	auxOK = true
	if caching != nil {
		auxOK = caching.replyErr == nil
		caching.Recycle()
	}
	for i, p := range aux {
		if p.replyErr != nil {
			auxOK = false
		} else {
			pttls[i] = p.res.Int
		}
		p.Recycle()
	}
	return t0, auxOK, nil
}

// cacheDecAny accepts any reply that is not an error.
func cacheDecAny(resp.Msg, *result) error { return nil }

func cacheDecInt(m resp.Msg, r *result) error {
	n := &m[m.Value(0)]
	if n.Type != resp.TypeInteger {
		return errUnexpected("PTTL", n, "integer")
	}
	r.Int = n.Int
	return nil
}

// cachedRead serves x, a read-only command on the single key key (added to
// x with argKey), from the cache, or from the server's reply, which it then
// caches. plain marks GET, whose value has the key's own slot; any other
// command is cached under its encoded form, so that different arguments
// (HGET key f1, HGET key f2) are different entries of key, all dropped
// when key changes. dec must leave the value in one of the result's
// fields; Any values must be of a type anySize knows. For plain reads the
// caller looks the entry up first (Store.GetString), to keep GET's hit
// path free of building a command.
//
// It returns the value as stored: callers must copy an Any value before
// handing it out (cloneCached). A missing key gives Nil; other errors are
// returned as they are.
func (v Cached) cachedRead(ctx context.Context, x *cmd, dec decoder, key string, plain bool) (cache.Value, error) {
	c := v.c
	cc := c.cache
	if cc == nil {
		x.Recycle()
		return cache.Value{}, ErrCacheDisabled
	}
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return cache.Value{}, err
	}
	if !cc.tracked(key) {
		if err := c.exec(ctx, x, dec); err != nil {
			return cache.Value{}, err
		}
		val, _, _ := toValue(&x.res)
		x.Recycle()
		return val, nil
	}
	x.dec = dec
	x.seal()
	t, err := cc.trackerFor(ctx, key)
	if err != nil {
		x.Recycle()
		return cache.Value{}, c.wrapErr(ctx, x.info.name, err)
	}
	var sub []byte
	if !plain {
		// GET's callers looked up the plain entry already.
		sub = x.buf[x.start:]
		if val, ok := cc.store.Get(key, sub); ok && val.Tag == t.tag.Load() {
			x.Recycle()
			if val.Miss {
				return cache.Value{}, Nil
			}
			return val, nil
		}
	}
	ctx, tr := c.traceCachedStart(ctx, x)
	val, err := v.readThrough(ctx, t, x, key, sub)
	c.traceCachedEnd(ctx, tr, err)
	return val, err
}

// readThrough is the part of cachedRead that goes to the server: it sends
// x on t's connection with what tracking needs, follows a cluster's
// redirects and caches the reply under key and sub (x's encoded form, or
// nil for GET).
func (v Cached) readThrough(ctx context.Context, t *tracker, x *cmd, key string, sub []byte) (cache.Value, error) {
	c := v.c
	cc := c.cache
	subKey := string(sub)
	fill := cc.store.Begin(key)
	defer fill.Done()
	name := x.info.name
	var h *hashRead
	var pttl [1]int64
	var tag uint64
	var t0 int64
	var auxOK bool
	var err error
	for redirects := 0; ; redirects++ {
		// The tag is taken before the read is sent: if the node stops
		// vouching for it meanwhile, the value is stored under a tag that
		// no hit accepts.
		tag = t.tag.Load()
		h = cc.newHashRead(t, x, key)
		t0, auxOK, err = cc.run(ctx, t, x, []string{key}, pttl[:], h.before(), h.after())
		if err != nil {
			cc.src.failed(t)
			return cache.Value{}, c.wrapErr(ctx, name, err)
		}
		rd, ok := cc.src.redirect(t, x)
		if !ok {
			break
		}
		// Not served by this node (cluster_cache.go).
		cc.release(h)
		x.replyErr = nil
		if t, err = cc.src.redirected(ctx, t, rd, key, redirects); err != nil {
			// Not a MOVED (ASK, TRYAGAIN, CLUSTERDOWN, ...), or too many:
			// the read goes the way of any command, uncached.
			if err := cc.src.uncached(ctx, x); err != nil {
				return cache.Value{}, err
			}
			val, _, _ := toValue(&x.res)
			x.Recycle()
			return val, nil
		}
	}
	cc.observe(h, x)
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		if errors.Is(err, Nil) && auxOK && !cc.opts.NoCacheMisses {
			if d, live := cc.deadline(t0, pttl[0], v.localTTL()); live {
				if d, live = cc.limit(ctx, h, nil, t0, d); live {
					fill.Put(subKey, cache.Value{Miss: true, Tag: tag}, 0, d)
				}
			}
		}
		cc.release(h)
		return cache.Value{}, err
	}
	val, size, ok := toValue(&x.res)
	x.Recycle()
	if ok && auxOK {
		if d, live := cc.deadline(t0, pttl[0], v.localTTL()); live {
			if d, live = cc.limit(ctx, h, val.Any, t0, d); live {
				val.Tag = tag
				fill.Put(subKey, val, size, d)
				val.Tag = 0
			}
		}
	}
	cc.release(h)
	return val, nil
}

// toValue moves a decoded result into a cache value and reports its size
// beyond the Value itself, and whether it may be cached.
func toValue(r *result) (cache.Value, int64, bool) {
	val := cache.Value{Str: r.Str, Int: r.Int, Float: r.Float, Any: r.Any}
	if r.Bool {
		val.Int = 1
	}
	size, ok := anySize(r.Any)
	return val, cache.StringSize(len(r.Str)) + size, ok
}

// Typed forms of cachedRead for generated methods of single-key read-only
// commands, one line each:
//
//	func (v Cached) StrLen(ctx context.Context, key string) (int64, error) {
//		x := newCmd(&cmdSTRLEN)
//		x.argKey(key)
//		return cachedInt(ctx, v, x, decInt, key)
//	}

func cachedStr(ctx context.Context, v Cached, x *cmd, dec decoder, key string) (string, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	return val.Str, err
}

func cachedInt(ctx context.Context, v Cached, x *cmd, dec decoder, key string) (int64, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	return val.Int, err
}

func cachedFloat(ctx context.Context, v Cached, x *cmd, dec decoder, key string) (float64, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	return val.Float, err
}

func cachedBool(ctx context.Context, v Cached, x *cmd, dec decoder, key string) (bool, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	return val.Int != 0, err
}

// cachedAny returns a copy of the cached value, so the caller may modify
// it. T must be a type anySize and cloneCached know (cache_size.go) for the
// value to be cached; other types are read from the server every time.
func cachedAny[T any](ctx context.Context, v Cached, x *cmd, dec decoder, key string) (T, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	t, _ := cloneCached(val.Any).(T)
	return t, err
}
