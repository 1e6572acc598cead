package conformance

import (
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// Hash field expiration (Redis 7.4+, only redis-8.0 in the spec).
func init() {
	register(Case{
		Name: "B_hash_field_expire",
		Commands: []string{"HEXPIRE", "HEXPIREAT", "HPEXPIRE", "HPEXPIREAT", "HTTL", "HPTTL",
			"HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"},
		Probe: func(e *Env) error {
			_, err := e.C.HExpire(e.Ctx, e.Key("h"), time.Minute, []string{"a"}, nil)
			return err
		},
		Run: func(e *Env) {
			k := e.Key("h")
			e.Do("HSET", k, "a", "1", "b", "2", "c", "3", "d", "4")

			r, err := e.C.HExpire(e.Ctx, k, 100*time.Second, []string{"a", "nope"}, nil)
			require.NoError(e, err)
			require.Equal(e, []int64{1, -2}, r)
			// NX: a already has a TTL.
			r, err = e.C.HExpire(e.Ctx, k, 200*time.Second, []string{"a", "b"}, &respire.HExpireOptions{Condition: respire.ExpireConditionNX})
			require.NoError(e, err)
			require.Equal(e, []int64{0, 1}, r)

			ttls, err := e.C.HTTL(e.Ctx, k, "a", "b", "c", "nope")
			require.NoError(e, err)
			require.Len(e, ttls, 4)
			require.True(e, ttls[0].Valid)
			require.InDelta(e, 100, ttls[0].V.Seconds(), 2)
			require.InDelta(e, 200, ttls[1].V.Seconds(), 2)
			// c has no expiry; nope is no field at all.
			require.Equal(e, []respire.Null[time.Duration]{{V: respire.NoExpiry, Valid: true}, {}}, ttls[2:])

			r, err = e.C.HPExpire(e.Ctx, k, 50*time.Second, []string{"c"}, nil)
			require.NoError(e, err)
			require.Equal(e, []int64{1}, r)
			ttls, err = e.C.HPTTL(e.Ctx, k, "c", "d")
			require.NoError(e, err)
			require.Len(e, ttls, 2)
			require.InDelta(e, 50000, ttls[0].V.Milliseconds(), 2000)
			require.Equal(e, respire.Null[time.Duration]{V: respire.NoExpiry, Valid: true}, ttls[1])

			at := time.Now().Add(time.Hour).Truncate(time.Second)
			r, err = e.C.HExpireAt(e.Ctx, k, at, []string{"d"}, nil)
			require.NoError(e, err)
			require.Equal(e, []int64{1}, r)
			ts, err := e.C.HExpireTime(e.Ctx, k, "d", "nope")
			require.NoError(e, err)
			require.Len(e, ts, 2)
			require.True(e, ts[0].Valid)
			require.True(e, at.Equal(ts[0].V), "%v, want %v", ts[0].V, at)
			require.False(e, ts[1].Valid, "no such field")

			atMs := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
			r, err = e.C.HPExpireAt(e.Ctx, k, atMs, []string{"d"}, &respire.HPExpireAtOptions{Condition: respire.ExpireConditionGT})
			require.NoError(e, err)
			require.Equal(e, []int64{1}, r)
			ts, err = e.C.HPExpireTime(e.Ctx, k, "d")
			require.NoError(e, err)
			require.Len(e, ts, 1)
			require.True(e, atMs.Equal(ts[0].V), "%v, want %v", ts[0].V, atMs)

			r, err = e.C.HPersist(e.Ctx, k, "a", "nope")
			require.NoError(e, err)
			require.Equal(e, []int64{1, -2}, r)
			r, err = e.C.HPersist(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, []int64{-1}, r)
			ttls, err = e.C.HTTL(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[time.Duration]{{V: respire.NoExpiry, Valid: true}}, ttls)
			ts, err = e.C.HExpireTime(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[time.Time]{{Valid: true}}, ts, "no expiry: the zero time")
			// A missing key: every field is missing.
			ttls, err = e.C.HTTL(e.Ctx, e.Key("nokey"), "a", "b")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[time.Duration]{{}, {}}, ttls)

			// Expiring in the past deletes the field at once: 2.
			r, err = e.C.HExpireAt(e.Ctx, k, time.Unix(1000, 0), []string{"b"}, nil)
			require.NoError(e, err)
			require.Equal(e, []int64{2}, r)
			ok, err := e.C.HExists(e.Ctx, k, "b")
			require.NoError(e, err)
			require.False(e, ok)
		},
	})

	register(Case{
		Name:     "B_hash_getex_setex_getdel",
		Commands: []string{"HGETEX", "HSETEX", "HGETDEL"},
		Probe: func(e *Env) error {
			_, err := e.C.HGetEx(e.Ctx, e.Key("h"), []string{"a"}, nil)
			return err
		},
		Run: func(e *Env) {
			k := e.Key("h")
			e.Do("HSET", k, "a", "1", "b", "2")

			v, err := e.C.HGetEx(e.Ctx, k, []string{"a", "nope"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{V: "1", Valid: true}, {}}, v)
			ex := 100 * time.Second
			v, err = e.C.HGetEx(e.Ctx, k, []string{"a"}, &respire.HGetExOptions{EX: ex})
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{V: "1", Valid: true}}, v)
			ttl, err := e.C.HTTL(e.Ctx, k, "a")
			require.NoError(e, err)
			require.InDelta(e, 100, ttl[0].V.Seconds(), 2)
			v, err = e.C.HGetEx(e.Ctx, k, []string{"a"}, &respire.HGetExOptions{Persist: true})
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{V: "1", Valid: true}}, v)
			ttl, err = e.C.HTTL(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[time.Duration]{{V: respire.NoExpiry, Valid: true}}, ttl)

			px := 30 * time.Second
			ok, err := e.C.HSetEx(e.Ctx, k, []respire.FieldValue{{Field: "c", Value: "3"}, {Field: "d", Value: "4"}},
				&respire.HSetExOptions{Condition: respire.FieldExistenceFNX, PX: px})
			require.NoError(e, err)
			require.True(e, ok)
			ttl, err = e.C.HPTTL(e.Ctx, k, "c", "d")
			require.NoError(e, err)
			require.InDelta(e, 30000, ttl[0].V.Milliseconds(), 2000)
			require.InDelta(e, 30000, ttl[1].V.Milliseconds(), 2000)
			// FNX fails when a field exists: nothing is set.
			ok, err = e.C.HSetEx(e.Ctx, k, []respire.FieldValue{{Field: "c", Value: "x"}, {Field: "e", Value: "5"}},
				&respire.HSetExOptions{Condition: respire.FieldExistenceFNX})
			require.NoError(e, err)
			require.False(e, ok)
			ok, err = e.C.HSetEx(e.Ctx, k, []respire.FieldValue{{Field: "c", Value: "33"}},
				&respire.HSetExOptions{Condition: respire.FieldExistenceFXX, KeepTTL: true})
			require.NoError(e, err)
			require.True(e, ok)
			ttl, err = e.C.HPTTL(e.Ctx, k, "c")
			require.NoError(e, err)
			require.Greater(e, ttl[0].V, time.Duration(0))

			v, err = e.C.HGetDel(e.Ctx, k, "c", "nope", "b")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{V: "33", Valid: true}, {}, {V: "2", Valid: true}}, v)
			all, err := e.C.HGetAll(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, map[string]string{"a": "1", "d": "4"}, all)
			v, err = e.C.HGetEx(e.Ctx, e.Key("nohash"), []string{"a"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{}}, v)
			e.Do("SET", e.Key("str"), "x")
			_, err = e.C.HGetDel(e.Ctx, e.Key("str"), "a")
			e.ServerError(err, "WRONGTYPE")
		},
	})
}
