package conformance

import (
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// String commands (GET, SET and INCR are in strings_example_test.go).
func init() {
	register(
		Case{
			Name:     "strings-append-range",
			Commands: []string{"APPEND", "STRLEN", "GETRANGE", "SUBSTR", "SETRANGE"},
			Run: func(e *Env) {
				k := e.Key("s")
				n, err := e.C.Append(e.Ctx, k, "Hello")
				require.NoError(e, err)
				require.Equal(e, int64(5), n)
				n, err = e.C.Append(e.Ctx, k, " World")
				require.NoError(e, err)
				require.Equal(e, int64(11), n)

				n, err = e.C.StrLen(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, int64(11), n)
				n, err = e.C.StrLen(e.Ctx, e.Key("missing"))
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				s, err := e.C.GetRange(e.Ctx, k, 0, 4)
				require.NoError(e, err)
				require.Equal(e, "Hello", s)
				s, err = e.C.GetRange(e.Ctx, k, -5, -1)
				require.NoError(e, err)
				require.Equal(e, "World", s)
				s, err = e.C.GetRange(e.Ctx, e.Key("missing"), 0, -1)
				require.NoError(e, err)
				require.Equal(e, "", s)

				s, err = e.C.SubStr(e.Ctx, k, 6, 10)
				require.NoError(e, err)
				require.Equal(e, "World", s)

				n, err = e.C.SetRange(e.Ctx, k, 6, "Redis")
				require.NoError(e, err)
				require.Equal(e, int64(11), n)
				v, err := e.C.Get(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, "Hello Redis", v)
				// Padding with zero bytes on a new key.
				n, err = e.C.SetRange(e.Ctx, e.Key("pad"), 3, "x")
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				v, err = e.C.Get(e.Ctx, e.Key("pad"))
				require.NoError(e, err)
				require.Equal(e, "\x00\x00\x00x", v)

				e.Do("RPUSH", e.Key("list"), "a")
				_, err = e.C.Append(e.Ctx, e.Key("list"), "x")
				e.ServerError(err, "WRONGTYPE")
			},
		},
		Case{
			Name:     "strings-counters",
			Commands: []string{"INCRBY", "DECRBY", "DECR", "INCRBYFLOAT"},
			Run: func(e *Env) {
				k := e.Key("n")
				n, err := e.C.IncrBy(e.Ctx, k, 5)
				require.NoError(e, err)
				require.Equal(e, int64(5), n)
				n, err = e.C.IncrBy(e.Ctx, k, -7)
				require.NoError(e, err)
				require.Equal(e, int64(-2), n)
				n, err = e.C.DecrBy(e.Ctx, k, -10)
				require.NoError(e, err)
				require.Equal(e, int64(8), n)
				n, err = e.C.DecrBy(e.Ctx, k, 3)
				require.NoError(e, err)
				require.Equal(e, int64(5), n)
				n, err = e.C.Decr(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				n, err = e.C.Decr(e.Ctx, e.Key("fresh"))
				require.NoError(e, err)
				require.Equal(e, int64(-1), n)

				f, err := e.C.IncrByFloat(e.Ctx, e.Key("f"), 10.5)
				require.NoError(e, err)
				require.Equal(e, 10.5, f)
				f, err = e.C.IncrByFloat(e.Ctx, e.Key("f"), 0.1)
				require.NoError(e, err)
				require.InDelta(e, 10.6, f, 1e-9)
				f, err = e.C.IncrByFloat(e.Ctx, e.Key("f"), -5)
				require.NoError(e, err)
				require.InDelta(e, 5.6, f, 1e-9)
				e.Do("SET", e.Key("e"), "5.0e3")
				f, err = e.C.IncrByFloat(e.Ctx, e.Key("e"), 200)
				require.NoError(e, err)
				require.Equal(e, 5200.0, f)

				e.Do("SET", e.Key("text"), "abc")
				_, err = e.C.IncrBy(e.Ctx, e.Key("text"), 1)
				e.ServerError(err, "ERR")
				_, err = e.C.DecrBy(e.Ctx, e.Key("text"), 1)
				e.ServerError(err, "ERR")
				_, err = e.C.Decr(e.Ctx, e.Key("text"))
				e.ServerError(err, "ERR")
				_, err = e.C.IncrByFloat(e.Ctx, e.Key("text"), 1)
				e.ServerError(err, "ERR")
			},
		},
		Case{
			Name:     "strings-getset",
			Commands: []string{"GETSET", "GETDEL", "SETNX", "SETEX", "PSETEX", "GETEX"},
			Run: func(e *Env) {
				k := e.Key("k")
				_, err := e.C.GetSet(e.Ctx, k, "a")
				caNil(e, err)
				s, err := e.C.GetSet(e.Ctx, k, "b")
				require.NoError(e, err)
				require.Equal(e, "a", s)

				s, err = e.C.GetDel(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, "b", s)
				_, err = e.C.GetDel(e.Ctx, k)
				caNil(e, err)

				ok, err := e.C.SetNX(e.Ctx, k, "1")
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.SetNX(e.Ctx, k, "2")
				require.NoError(e, err)
				require.False(e, ok)
				v, err := e.C.Get(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, "1", v)

				require.NoError(e, e.C.SetEx(e.Ctx, e.Key("ex"), 100*time.Second, "v"))
				ttl, err := e.C.TTL(e.Ctx, e.Key("ex"))
				require.NoError(e, err)
				require.True(e, ttl > 90*time.Second && ttl <= 100*time.Second, "ttl %v", ttl)
				v, err = e.C.Get(e.Ctx, e.Key("ex"))
				require.NoError(e, err)
				require.Equal(e, "v", v)
				err = e.C.SetEx(e.Ctx, e.Key("ex"), 0, "v")
				e.ServerError(err, "ERR") // invalid expire time
				// A fraction of a second is exact: sent as PSETEX 1500.
				require.NoError(e, e.C.SetEx(e.Ctx, e.Key("ex"), 1500*time.Millisecond, "v"))
				pttl, err := e.C.PTTL(e.Ctx, e.Key("ex"))
				require.NoError(e, err)
				require.True(e, pttl > time.Second && pttl <= 1500*time.Millisecond, "pttl %v", pttl)

				require.NoError(e, e.C.PSetEx(e.Ctx, e.Key("px"), 50*time.Second, "w"))
				pttl, err = e.C.PTTL(e.Ctx, e.Key("px"))
				require.NoError(e, err)
				require.True(e, pttl > 40*time.Second && pttl <= 50*time.Second, "pttl %v", pttl)
				v, err = e.C.Get(e.Ctx, e.Key("px"))
				require.NoError(e, err)
				require.Equal(e, "w", v)

				// GETEX: every expiration form, then PERSIST.
				g := e.Key("getex")
				e.Do("SET", g, "val")
				s, err = e.C.GetEx(e.Ctx, g, nil)
				require.NoError(e, err)
				require.Equal(e, "val", s)
				ttl, err = e.C.TTL(e.Ctx, g)
				require.NoError(e, err)
				require.Equal(e, respire.NoExpiry, ttl)

				s, err = e.C.GetEx(e.Ctx, g, &respire.GetExOptions{EX: 100 * time.Second})
				require.NoError(e, err)
				require.Equal(e, "val", s)
				ttl, err = e.C.TTL(e.Ctx, g)
				require.NoError(e, err)
				require.True(e, ttl > 90*time.Second && ttl <= 100*time.Second, "ttl %v", ttl)

				s, err = e.C.GetEx(e.Ctx, g, &respire.GetExOptions{PX: 20 * time.Second})
				require.NoError(e, err)
				require.Equal(e, "val", s)
				pttl, err = e.C.PTTL(e.Ctx, g)
				require.NoError(e, err)
				require.True(e, pttl > 10*time.Second && pttl <= 20*time.Second, "pttl %v", pttl)

				at := time.Now().Add(300 * time.Second)
				s, err = e.C.GetEx(e.Ctx, g, &respire.GetExOptions{EXAT: at})
				require.NoError(e, err)
				require.Equal(e, "val", s)
				et, err := e.C.ExpireTime(e.Ctx, g)
				require.NoError(e, err)
				require.Equal(e, at.Unix(), et.Unix())

				at = time.Now().Add(400 * time.Second)
				s, err = e.C.GetEx(e.Ctx, g, &respire.GetExOptions{PXAT: at})
				require.NoError(e, err)
				require.Equal(e, "val", s)
				pet, err := e.C.PExpireTime(e.Ctx, g)
				require.NoError(e, err)
				require.Equal(e, at.UnixMilli(), pet.UnixMilli())

				s, err = e.C.GetEx(e.Ctx, g, &respire.GetExOptions{Persist: true})
				require.NoError(e, err)
				require.Equal(e, "val", s)
				ttl, err = e.C.TTL(e.Ctx, g)
				require.NoError(e, err)
				require.Equal(e, respire.NoExpiry, ttl)

				_, err = e.C.GetEx(e.Ctx, e.Key("missing"), &respire.GetExOptions{Persist: true})
				caNil(e, err)
			},
		},
		Case{
			Name:     "strings-multi",
			Commands: []string{"MSET", "MGET", "MSETNX"},
			Run: func(e *Env) {
				k1, k2, k3, k4 := e.Key("1"), e.Key("2"), e.Key("3"), e.Key("4")
				require.NoError(e, e.C.MSet(e.Ctx, respire.KeyValue{Key: k1, Value: "one"}, respire.KeyValue{Key: k2, Value: ""}))
				vs, err := e.C.MGet(e.Ctx, k1, k2, k3)
				require.NoError(e, err)
				require.Equal(e, caNulls(caS("one"), caS(""), nil), vs)

				ok, err := e.C.MSetNX(e.Ctx, respire.KeyValue{Key: k3, Value: "three"}, respire.KeyValue{Key: k1, Value: "x"})
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.MSetNX(e.Ctx, respire.KeyValue{Key: k3, Value: "three"}, respire.KeyValue{Key: k4, Value: "four"})
				require.NoError(e, err)
				require.True(e, ok)

				e.Do("RPUSH", e.Key("list"), "a")
				vs, err = e.C.MGet(e.Ctx, k1, e.Key("list"), k3, k4)
				require.NoError(e, err)
				require.Equal(e, caNulls(caS("one"), nil, caS("three"), caS("four")), vs)
			},
		},
		Case{
			Name:     "strings-lcs",
			Commands: []string{"LCS"},
			Run: func(e *Env) {
				a, b := e.Key("a"), e.Key("b")
				e.Do("MSET", a, "ohmytext", b, "mynewtext")
				s, err := e.C.LCS(e.Ctx, a, b, nil)
				require.NoError(e, err)
				require.Equal(e, "mytext", s)
				s, err = e.C.LCS(e.Ctx, a, e.Key("missing"), nil)
				require.NoError(e, err)
				require.Equal(e, "", s)

				n, err := e.C.LCSLen(e.Ctx, a, b, nil)
				require.NoError(e, err)
				require.Equal(e, int64(6), n)

				idx, err := e.C.LCSIdx(e.Ctx, a, b, nil)
				require.NoError(e, err)
				require.Equal(e, respire.LCSIdx{
					Matches: []respire.LCSMatch{
						{A: respire.LCSRange{Start: 4, End: 7}, B: respire.LCSRange{Start: 5, End: 8}},
						{A: respire.LCSRange{Start: 2, End: 3}, B: respire.LCSRange{Start: 0, End: 1}},
					},
					Len: 6,
				}, idx)

				idx, err = e.C.LCSIdx(e.Ctx, a, b, &respire.LCSOptions{MinMatchLen: 4, WithMatchLen: true})
				require.NoError(e, err)
				require.Equal(e, respire.LCSIdx{
					Matches: []respire.LCSMatch{
						{A: respire.LCSRange{Start: 4, End: 7}, B: respire.LCSRange{Start: 5, End: 8}, Len: 4},
					},
					Len: 6,
				}, idx)

				e.Do("RPUSH", e.Key("list"), "a")
				_, err = e.C.LCS(e.Ctx, a, e.Key("list"), nil)
				e.ServerError(err, "ERR") // "The specified keys must contain string values"
			},
		},
	)
}
