package respire

// Hand-written cached reads. GET has its own hit path (a string lookup, no
// command built); MGET and HMGET are split into the entries of GET and
// HGET, so that the multi-key forms and the single-key forms share them.

import (
	"context"

	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Get returns the value of key, or Nil when it does not exist. A hit
// costs a map lookup and no allocation.
func (v Cached) Get(ctx context.Context, key string) (string, error) {
	if cc := v.c.cache; cc != nil {
		if cc.src.spread() {
			return v.getCluster(ctx, key)
		}
		if s, miss, ok := cc.store.GetString(key); ok {
			if miss {
				return "", Nil
			}
			return s, nil
		}
	}
	return v.getSlow(ctx, key)
}

func (v Cached) getSlow(ctx context.Context, key string) (string, error) {
	x := newCmd(&cmdGET)
	x.argKey(key)
	val, err := v.cachedRead(ctx, x, cacheDecStrNull, key, true)
	return val.Str, err
}

// HGet returns the value of field in the hash at key, or Nil.
func (v Cached) HGet(ctx context.Context, key, field string) (string, error) {
	x := newCmd(&cmdHGET)
	x.argKey(key)
	x.arg(field)
	val, err := v.cachedRead(ctx, x, cacheDecStrNull, key, false)
	return val.Str, err
}

// HGetAll returns the fields and values of the hash at key; a missing key
// gives an empty map. The map is the caller's.
func (v Cached) HGetAll(ctx context.Context, key string) (map[string]string, error) {
	x := newCmd(&cmdHGETALL)
	x.argKey(key)
	val, err := v.cachedRead(ctx, x, cacheDecStrMap, key, false)
	if err != nil {
		return nil, err
	}
	m, _ := cloneCached(val.Any).(map[string]string)
	if m == nil {
		m = map[string]string{}
	}
	return m, nil
}

// MGet returns the values of keys, invalid where a key does not exist.
// Each key is cached on its own, as by Get: keys cached already are not
// sent, and the others are read with one MGET and cached one by one.
func (v Cached) MGet(ctx context.Context, keys ...string) ([]Null[string], error) {
	cc := v.c.cache
	if cc == nil {
		return nil, ErrCacheDisabled
	}
	if len(keys) == 0 {
		return nil, newArgError("MGET", "key", "at least one key is required")
	}
	if cc.src.spread() {
		return v.mgetEach(ctx, keys)
	}
	out := make([]Null[string], len(keys))
	var missing []int
	for i, k := range keys {
		if s, miss, ok := cc.store.GetString(k); ok {
			out[i] = Null[string]{V: s, Valid: !miss}
			continue
		}
		missing = append(missing, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	x := newCmd(&cmdMGET)
	var tracked []string
	var fills []cache.Fill
	for _, i := range missing {
		x.argKey(keys[i])
		if cc.tracked(keys[i]) {
			tracked = append(tracked, keys[i])
			fills = append(fills, cc.store.Begin(keys[i]))
		}
	}
	defer func() {
		for i := range fills {
			fills[i].Done()
		}
	}()
	x.dec = cacheDecNullStrs
	pttls := make([]int64, len(tracked))
	// Not spread: one tracker serves every key.
	t, err := cc.trackerFor(ctx, keys[0])
	if err != nil {
		x.Recycle()
		return nil, v.c.wrapErr(ctx, "MGET", err)
	}
	ctx, tr := v.c.traceCachedStart(ctx, x)
	t0, auxOK, err := cc.run(ctx, t, x, tracked, pttls, nil, nil)
	if err != nil {
		err = v.c.wrapErr(ctx, "MGET", err)
		v.c.traceCachedEnd(ctx, tr, err)
		return nil, err
	}
	got, err := takeNullStrs(x, len(missing), "MGET", "one value per key")
	v.c.traceCachedEnd(ctx, tr, err)
	if err != nil {
		return nil, err
	}
	ti := 0
	for j, i := range missing {
		out[i] = got[j]
		if ti >= len(tracked) || tracked[ti] != keys[i] {
			continue
		}
		f, pttl := &fills[ti], pttls[ti]
		ti++
		if !auxOK || (!got[j].Valid && cc.opts.NoCacheMisses) {
			continue
		}
		if d, live := cc.deadline(t0, pttl, v.localTTL()); live {
			f.Put("", cache.Value{Str: got[j].V, Miss: !got[j].Valid}, cache.StringSize(len(got[j].V)), d)
		}
	}
	return out, nil
}

// HMGet returns the values of fields in the hash at key, invalid where a
// field does not exist. Each field is cached as by HGet.
func (v Cached) HMGet(ctx context.Context, key string, fields ...string) ([]Null[string], error) {
	cc := v.c.cache
	if cc == nil {
		return nil, ErrCacheDisabled
	}
	if len(fields) == 0 {
		return nil, newArgError("HMGET", "field", "at least one field is required")
	}
	if cc.src.spread() {
		return v.hmgetEach(ctx, key, fields)
	}
	if !cc.tracked(key) {
		x := newCmd(&cmdHMGET)
		x.argKey(key)
		for _, f := range fields {
			x.arg(f)
		}
		if err := v.c.exec(ctx, x, cacheDecNullStrs); err != nil {
			return nil, err
		}
		got, _ := x.res.Any.([]Null[string])
		x.Recycle()
		return got, nil
	}
	out := make([]Null[string], len(fields))
	subs := make([]string, len(fields))
	var missing []int
	for i, f := range fields {
		// The entry of HGET key f, keyed by its encoded form.
		h := newCmd(&cmdHGET)
		h.argKey(key)
		h.arg(f)
		h.seal()
		sub := h.buf[h.start:]
		if val, ok := cc.store.Get(key, sub); ok {
			out[i] = Null[string]{V: val.Str, Valid: !val.Miss}
		} else {
			subs[i] = string(sub)
			missing = append(missing, i)
		}
		h.Recycle()
	}
	if len(missing) == 0 {
		return out, nil
	}
	x := newCmd(&cmdHMGET)
	x.argKey(key)
	for _, i := range missing {
		x.arg(fields[i])
	}
	x.dec = cacheDecNullStrs
	fill := cc.store.Begin(key)
	defer fill.Done()
	// On a server with hash field TTLs, HPTTL of the same fields goes in
	// the same write, and each field's entry expires with its field.
	t, err := cc.trackerFor(ctx, key)
	if err != nil {
		x.Recycle()
		return nil, v.c.wrapErr(ctx, "HMGET", err)
	}
	var ttl *cmd
	var after []*cmd
	if cc.fieldTTLs(t.mux) {
		sent := make([]string, len(missing))
		for j, i := range missing {
			sent[j] = fields[i]
		}
		ttl = newFieldTTLCmd(key, sent, x.Route)
		after = []*cmd{ttl}
	}
	var pttl [1]int64
	ctx, tr := v.c.traceCachedStart(ctx, x)
	t0, auxOK, err := cc.run(ctx, t, x, []string{key}, pttl[:], nil, after)
	if err != nil {
		err = v.c.wrapErr(ctx, "HMGET", err)
		v.c.traceCachedEnd(ctx, tr, err)
		return nil, err
	}
	var ttls []int64
	if ttl != nil {
		var ok bool
		if ttls, ok = cc.fieldTTLReply(ttl, len(missing)); !ok {
			auxOK = false
		}
	}
	got, err := takeNullStrs(x, len(missing), "HMGET", "one value per field")
	v.c.traceCachedEnd(ctx, tr, err)
	if err != nil {
		return nil, err
	}
	d, live := cc.deadline(t0, pttl[0], v.localTTL())
	for j, i := range missing {
		out[i] = got[j]
		if !auxOK || !live || (!got[j].Valid && cc.opts.NoCacheMisses) {
			continue
		}
		dj, ok := d, true
		if ttls != nil {
			dj, ok = fieldDeadline(d, t0, ttls[j], got[j].Valid)
		}
		if ok {
			fill.Put(subs[i], cache.Value{Str: got[j].V, Miss: !got[j].Valid}, cache.StringSize(len(got[j].V)), dj)
		}
	}
	return out, nil
}

func cacheDecStrNull(m resp.Msg, r *result) (err error) {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	r.Str, _, err = readStr(m, 0)
	return err
}

func cacheDecStrMap(m resp.Msg, r *result) error {
	v, _, err := readMap(m, 0, readStr, readStr)
	if err != nil {
		return err
	}
	if v == nil {
		v = map[string]string{}
	}
	r.Any = v
	return nil
}

func readNullStr(m resp.Msg, i int) (Null[string], int, error) { return readNull(m, i, readStr) }

func cacheDecNullStrs(m resp.Msg, r *result) error {
	v, _, err := readList(m, 0, readNullStr)
	if err != nil {
		return err
	}
	r.Any = v
	return nil
}

// takeNullStrs returns the values of x, an answered MGET or HMGET of n
// keys or fields (decoded by cacheDecNullStrs), or its error, and
// recycles it. want names what a reply of the wrong length lacks.
func takeNullStrs(x *cmd, n int, command, want string) ([]Null[string], error) {
	defer x.Recycle()
	if x.replyErr != nil {
		return nil, x.replyErr
	}
	got, _ := x.res.Any.([]Null[string])
	if len(got) != n {
		return nil, &UnexpectedReplyError{Command: command, Got: "a reply of another length", Want: want}
	}
	return got, nil
}
