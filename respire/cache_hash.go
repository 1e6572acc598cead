package respire

// Hash field TTLs and the client-side cache.
//
// Since Redis 7.4 a hash field may carry a TTL of its own (HEXPIRE,
// HPEXPIRE, HSETEX, HGETEX ...). Once it runs out the field is gone for
// every read, but the server reports nothing until it deletes the field:
// at once when a command touches it, otherwise in its active expiry cycle,
// up to ~100 ms later. The key's own PTTL stays -1. So a cached hash read
// also takes its deadline from the TTLs of the fields its value depends
// on, measured as PTTL is: relative (HPTTL, not HPEXPIRETIME, so that the
// client's and the server's clocks need not agree), and counted from the
// store's clock read before the command that measured it was sent, which
// is no later than the server's measurement.
//
//   - Reads of named fields (HGET, HMGET, HEXISTS, HSTRLEN, HEXPIRETIME,
//     HPEXPIRETIME) send HPTTL key FIELDS n field... in the same write as
//     the read and PTTL: one more command on a miss, no more round trips.
//   - Reads of the whole hash (HGETALL, HKEYS, HVALS, HLEN, and any other
//     cached command whose name starts with H) depend on every field.
//     Once the reply is in, a second round trip on the same connection
//     sends HPTTL for every field, and the value is cached only when it
//     is non-empty. HGETALL and HKEYS name the fields in their reply; the
//     others send HKEYS right before the read, in the same write, so that
//     HKEYS lists every field the read saw (the key is tracked from HKEYS
//     on: a change in between spoils the fill). Any change to the hash
//     before the HPTTL ran is reported by an invalidation that arrives
//     before its reply and spoils the fill as well.
//   - A field that the read saw and HPTTL reports missing (-2) expired in
//     between: the value is returned but not cached. -2 for a field the
//     read did not see either (HGET's nil, HEXISTS's 0) is consistent and
//     sets no limit; the creation of the field will invalidate the key.
//
// Whether the server has field TTLs comes from the spec (HPTTL's servers:
// Redis 8.0 has them, Redis 7.0 and Valkey 8.1 do not), not from parsing
// versions. A server the spec does not know is asked: one that answers
// "unknown command" to HPTTL has no field TTLs and is not asked again
// (until the cache's connection is made anew); a read whose HPTTL failed
// is returned but not cached.

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// hashShape says which fields the value of a cached hash read depends on.
type hashShape uint8

const (
	hashNone   hashShape = iota // not a hash read, or the server has no field TTLs
	hashArgs                    // the fields are the arguments after the key: HGET key field
	hashFields                  // FIELDS numfields field... after the key
	hashNamed                   // every field, named by the reply (map or list)
	hashWhole                   // every field, named by HKEYS sent before the read
)

// hashReads are the cached hash reads, by their spec entry. A cached read
// of a command that is not here and whose name starts with H is taken as
// hashWhole, which is right for any read of a hash. TestHashReadsCoverSpec
// checks this table against the spec's hash group.
var hashReads = map[*cmdInfo]hashShape{
	&cmdHGET:         hashArgs,
	&cmdHEXISTS:      hashArgs,
	&cmdHSTRLEN:      hashArgs,
	&cmdHMGET:        hashArgs, // Cached.HMGet has a path of its own
	&cmdHEXPIRETIME:  hashFields,
	&cmdHPEXPIRETIME: hashFields,
	&cmdHGETALL:      hashNamed,
	&cmdHKEYS:        hashNamed,
	&cmdHVALS:        hashWhole,
	&cmdHLEN:         hashWhole,
}

func hashShapeOf(info *cmdInfo) hashShape {
	if s, ok := hashReads[info]; ok {
		return s
	}
	if strings.HasPrefix(info.name, "H") {
		return hashWhole
	}
	return hashNone
}

// fieldTTLState remembers, for one handshake of the cache's connections,
// whether the server has field TTLs.
type fieldTTLState struct {
	info *transport.ConnInfo
	none bool // spec says no, or HPTTL was an unknown command
}

// fieldTTLs reports whether cached hash reads must ask for field TTLs.
func (cc *clientCache) fieldTTLs(m *transport.Mux) bool {
	si := m.ServerInfo()
	st := cc.fieldTTL.Load()
	if st == nil || st.info != si {
		st = &fieldTTLState{info: si}
		if si != nil {
			if bit := serverBit(*si); bit != 0 {
				st.none = cmdHPTTL.servers&bit == 0
			}
		}
		cc.fieldTTL.Store(st)
	}
	return !st.none
}

// fieldTTLFailed notes the error of an HPTTL: "unknown command" means the
// server has no field TTLs.
func (cc *clientCache) fieldTTLFailed(err error) {
	se, ok := serverError(err)
	if !ok || !strings.Contains(strings.ToLower(se.Message), "unknown command") {
		return
	}
	if st := cc.fieldTTL.Load(); st != nil && !st.none {
		cc.fieldTTL.CompareAndSwap(st, &fieldTTLState{info: st.info, none: true})
	}
}

// newFieldTTLCmd is HPTTL key FIELDS n fields..., on route.
func newFieldTTLCmd(key string, fields []string, route uint32) *cmd {
	p := newCmd(&cmdHPTTL)
	p.arg(key)
	p.arg("FIELDS")
	p.argInt(int64(len(fields)))
	for _, f := range fields {
		p.arg(f)
	}
	p.dec = decListInt
	p.seal()
	p.Route = route
	return p
}

// fieldTTLReply returns the TTLs of an HPTTL for n fields that has been
// answered, and recycles it; ok is false when it failed.
func (cc *clientCache) fieldTTLReply(p *cmd, n int) ([]int64, bool) {
	defer p.Recycle()
	if p.replyErr != nil {
		cc.fieldTTLFailed(p.replyErr)
		return nil, false
	}
	ttls, _ := p.res.Any.([]int64)
	return ttls, len(ttls) == n
}

// fieldDeadline lowers the deadline d (0: none) of a value read at t0 by
// the TTL ms of one field it depends on, as HPTTL gave it after t0; seen
// tells whether the read saw the field. ok is false when the value must
// not be cached.
func fieldDeadline(d, t0, ms int64, seen bool) (int64, bool) {
	switch {
	case ms == -1:
		return d, true
	case ms == -2:
		// Missing now: consistent when the read did not see it either;
		// otherwise it expired after the read.
		return d, !seen
	case ms <= 0:
		return 0, false
	}
	e := t0 + ms*int64(time.Millisecond)
	if d == 0 || e < d {
		d = e
	}
	return d, true
}

// hashRead is the field-TTL side of one cached hash read (cachedRead).
type hashRead struct {
	shape  hashShape
	key    string
	route  uint32
	mux    *transport.Mux // of the read's tracker
	fields []string       // hashArgs, hashFields: the fields read
	seen   []bool         // hashArgs, hashFields: whether the read saw each
	ttl    *cmd           // hashArgs, hashFields: HPTTL after the read
	keys   *cmd           // hashWhole: HKEYS before the read
	names  []string       // hashWhole: the fields HKEYS listed
	failed bool           // an auxiliary command failed: do not cache
}

// newHashRead prepares the auxiliary commands of x, a read of key, or
// returns nil when x needs none.
func (cc *clientCache) newHashRead(t *tracker, x *cmd, key string) *hashRead {
	shape := hashShapeOf(x.info)
	if shape == hashNone || !cc.fieldTTLs(t.mux) {
		return nil
	}
	h := &hashRead{shape: shape, key: key, route: x.Route, mux: t.mux}
	switch shape {
	case hashArgs, hashFields:
		args := cmdArgs(x)
		if shape == hashArgs && len(args) >= 3 {
			h.fields = args[2:]
		} else if shape == hashFields && len(args) >= 4 && args[2] == "FIELDS" {
			h.fields = args[4:]
		}
		if len(h.fields) == 0 {
			// Not the shape expected: depend on every field instead.
			h.shape = hashWhole
			return cc.prepareWhole(h)
		}
		h.ttl = newFieldTTLCmd(key, h.fields, x.Route)
	case hashWhole:
		return cc.prepareWhole(h)
	}
	return h
}

func (cc *clientCache) prepareWhole(h *hashRead) *hashRead {
	k := newCmd(&cmdHKEYS)
	k.arg(h.key)
	k.dec = decListStr
	k.seal()
	k.Route = h.route
	h.keys = k
	return h
}

// before and after are the commands to send before and after the read.
func (h *hashRead) before() []*cmd {
	if h == nil || h.keys == nil {
		return nil
	}
	return []*cmd{h.keys}
}

func (h *hashRead) after() []*cmd {
	if h == nil || h.ttl == nil {
		return nil
	}
	return []*cmd{h.ttl}
}

// observe takes what it needs from the answered read x and its auxiliary
// commands, which it recycles; call it once, before x is recycled.
func (cc *clientCache) observe(h *hashRead, x *cmd) {
	if h == nil {
		return
	}
	if h.keys != nil {
		k := h.keys
		h.keys = nil
		if k.replyErr != nil {
			h.failed = true
		} else {
			h.names, _ = k.res.Any.([]string)
		}
		k.Recycle()
	}
	if h.ttl == nil {
		return
	}
	h.seen = make([]bool, len(h.fields))
	for i := range h.seen {
		h.seen[i] = fieldSeen(x, i)
	}
}

// fieldSeen reports whether the read x saw its i-th field (hashArgs and
// hashFields shapes).
func fieldSeen(x *cmd, i int) bool {
	if x.replyErr != nil {
		return !errors.Is(x.replyErr, Nil)
	}
	switch x.info {
	case &cmdHEXISTS:
		return x.res.Bool
	case &cmdHSTRLEN:
		return x.res.Int != 0
	case &cmdHMGET:
		vs, _ := x.res.Any.([]Null[string])
		return i >= len(vs) || vs[i].Valid
	case &cmdHEXPIRETIME, &cmdHPEXPIRETIME:
		ts, _ := x.res.Any.([]Null[time.Time])
		return i >= len(ts) || ts[i].Valid
	}
	// HGET's value, or a read whose answer cannot tell: assume it saw the
	// field, which forbids caching when HPTTL says it is missing.
	return true
}

// limit lowers the deadline d of the value val read at t0, by the TTLs of
// the fields it depends on; ok is false when it must not be cached. For
// whole-hash reads it asks the server for the TTLs (a second round trip).
// It recycles the auxiliary commands still held.
func (cc *clientCache) limit(ctx context.Context, h *hashRead, val any, t0, d int64) (int64, bool) {
	if h == nil {
		return d, true
	}
	if h.ttl != nil {
		ttls, ok := cc.fieldTTLReply(h.ttl, len(h.fields))
		h.ttl = nil
		if !ok || h.failed {
			return 0, false
		}
		for i, ms := range ttls {
			if d, ok = fieldDeadline(d, t0, ms, h.seen[i]); !ok {
				return 0, false
			}
		}
		return d, true
	}
	if h.failed {
		return 0, false
	}
	names := h.names
	if h.shape == hashNamed {
		switch v := val.(type) {
		case map[string]string:
			names = make([]string, 0, len(v))
			for f := range v {
				names = append(names, f)
			}
		case []string:
			names = v
		default:
			return 0, false
		}
	}
	if len(names) == 0 {
		return d, true
	}
	p := newFieldTTLCmd(h.key, names, h.route)
	t1 := cc.store.Now()
	if err := h.mux.Do(ctx, &p.Request); err != nil {
		return 0, false
	}
	ttls, ok := cc.fieldTTLReply(p, len(names))
	if !ok {
		return 0, false
	}
	for _, ms := range ttls {
		// Every field named was seen by the read, or listed by HKEYS
		// before it (a superset of what the read saw).
		if d, ok = fieldDeadline(d, t1, ms, true); !ok {
			return 0, false
		}
	}
	return d, true
}

// cmdArgs returns the arguments of x as strings, decoded from its buffer
// (which holds bulk strings only, as the arg methods write them).
func cmdArgs(x *cmd) []string {
	x.flatten()
	b := x.buf[hdrRoom:]
	var out []string
	for len(b) > 0 && b[0] == '$' {
		i := bytes.IndexByte(b, '\r')
		if i < 0 {
			return nil
		}
		n, err := strconv.Atoi(string(b[1:i]))
		if err != nil || n < 0 || len(b) < i+2+n+2 {
			return nil
		}
		out = append(out, string(b[i+2:i+2+n]))
		b = b[i+2+n+2:]
	}
	return out
}

// release recycles the auxiliary command that limit did not consume.
func (cc *clientCache) release(h *hashRead) {
	if h != nil && h.ttl != nil {
		h.ttl.Recycle()
		h.ttl = nil
	}
}
