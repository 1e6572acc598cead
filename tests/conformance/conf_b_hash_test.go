package conformance

import (
	"errors"
	"sort"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// Hash commands present on every server.
func init() {
	register(Case{
		Name: "B_hash_basic",
		Commands: []string{"HSET", "HGET", "HGETALL", "HMSET", "HMGET", "HSETNX", "HEXISTS",
			"HDEL", "HLEN", "HKEYS", "HVALS", "HSTRLEN"},
		Run: func(e *Env) {
			k := e.Key("h")
			n, err := e.C.HSet(e.Ctx, k, respire.FieldValue{Field: "a", Value: "1"}, respire.FieldValue{Field: "b", Value: "hello"})
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			n, err = e.C.HSet(e.Ctx, k, respire.FieldValue{Field: "a", Value: "one"})
			require.NoError(e, err)
			require.Equal(e, int64(0), n)

			v, err := e.C.HGet(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, "one", v)
			_, err = e.C.HGet(e.Ctx, k, "missing")
			require.True(e, errors.Is(err, respire.Nil), "HGET missing field: %v", err)

			require.NoError(e, e.C.HMSet(e.Ctx, k, respire.FieldValue{Field: "c", Value: "3"}, respire.FieldValue{Field: "d", Value: ""}))

			all, err := e.C.HGetAll(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, map[string]string{"a": "one", "b": "hello", "c": "3", "d": ""}, all)
			empty, err := e.C.HGetAll(e.Ctx, e.Key("nohash"))
			require.NoError(e, err)
			require.Empty(e, empty)

			mv, err := e.C.HMGet(e.Ctx, k, "a", "zz", "d")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{V: "one", Valid: true}, {}, {V: "", Valid: true}}, mv)

			ok, err := e.C.HSetNX(e.Ctx, k, "a", "x")
			require.NoError(e, err)
			require.False(e, ok)
			ok, err = e.C.HSetNX(e.Ctx, k, "e", "five")
			require.NoError(e, err)
			require.True(e, ok)

			ok, err = e.C.HExists(e.Ctx, k, "e")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.HExists(e.Ctx, k, "nope")
			require.NoError(e, err)
			require.False(e, ok)

			sl, err := e.C.HStrLen(e.Ctx, k, "b")
			require.NoError(e, err)
			require.Equal(e, int64(5), sl)
			sl, err = e.C.HStrLen(e.Ctx, k, "nope")
			require.NoError(e, err)
			require.Equal(e, int64(0), sl)

			n, err = e.C.HDel(e.Ctx, k, "d", "e", "nope")
			require.NoError(e, err)
			require.Equal(e, int64(2), n)

			n, err = e.C.HLen(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)

			keys, err := e.C.HKeys(e.Ctx, k)
			require.NoError(e, err)
			sort.Strings(keys)
			require.Equal(e, []string{"a", "b", "c"}, keys)
			vals, err := e.C.HVals(e.Ctx, k)
			require.NoError(e, err)
			sort.Strings(vals)
			require.Equal(e, []string{"3", "hello", "one"}, vals)

			// WRONGTYPE on a string key.
			s := e.Key("str")
			e.Do("SET", s, "x")
			_, err = e.C.HGet(e.Ctx, s, "a")
			e.ServerError(err, "WRONGTYPE")
		},
	})

	register(Case{
		Name:     "B_hash_incr",
		Commands: []string{"HINCRBY", "HINCRBYFLOAT"},
		Run: func(e *Env) {
			k := e.Key("h")
			n, err := e.C.HIncrBy(e.Ctx, k, "n", 5)
			require.NoError(e, err)
			require.Equal(e, int64(5), n)
			n, err = e.C.HIncrBy(e.Ctx, k, "n", -7)
			require.NoError(e, err)
			require.Equal(e, int64(-2), n)
			f, err := e.C.HIncrByFloat(e.Ctx, k, "f", 1.5)
			require.NoError(e, err)
			require.Equal(e, 1.5, f)
			f, err = e.C.HIncrByFloat(e.Ctx, k, "f", 0.25)
			require.NoError(e, err)
			require.Equal(e, 1.75, f)
			e.Do("HSET", k, "s", "abc")
			_, err = e.C.HIncrBy(e.Ctx, k, "s", 1)
			e.ServerError(err, "ERR")
		},
	})

	register(Case{
		Name:     "B_hash_rand_scan",
		Commands: []string{"HRANDFIELD", "HSCAN"},
		Run: func(e *Env) {
			k := e.Key("h")
			_, err := e.C.HRandField(e.Ctx, k)
			require.True(e, errors.Is(err, respire.Nil), "HRANDFIELD on missing key: %v", err)
			e.Do("HSET", k, "a", "1", "b", "2", "c", "3")
			want := map[string]string{"a": "1", "b": "2", "c": "3"}

			f, err := e.C.HRandField(e.Ctx, k)
			require.NoError(e, err)
			require.Contains(e, want, f)

			fs, err := e.C.HRandFieldCount(e.Ctx, k, 10)
			require.NoError(e, err)
			sort.Strings(fs)
			require.Equal(e, []string{"a", "b", "c"}, fs)
			fs, err = e.C.HRandFieldCount(e.Ctx, k, -5)
			require.NoError(e, err)
			require.Len(e, fs, 5)
			for _, x := range fs {
				require.Contains(e, want, x)
			}

			fv, err := e.C.HRandFieldWithValues(e.Ctx, k, 3)
			require.NoError(e, err)
			got := map[string]string{}
			for _, p := range fv {
				got[p.Field] = p.Value
			}
			require.Len(e, fv, 3)
			require.Equal(e, want, got)

			page, err := e.C.HScan(e.Ctx, k, 0, nil)
			require.NoError(e, err)
			require.Equal(e, int64(0), page.Cursor)
			got = map[string]string{}
			for _, p := range page.Items {
				got[p.Field] = p.Value
			}
			require.Equal(e, want, got)

			cnt := int64(10)
			page, err = e.C.HScan(e.Ctx, k, 0, &respire.HScanOptions{Match: "b*", Count: cnt})
			require.NoError(e, err)
			require.Equal(e, []respire.FieldValue{{Field: "b", Value: "2"}}, page.Items)

			if e.Flavor != harness.Redis70 { // NOVALUES since 7.4 / Valkey 8.0
				np, err := e.C.HScanNoValues(e.Ctx, k, 0, nil)
				require.NoError(e, err)
				require.Equal(e, int64(0), np.Cursor)
				sort.Strings(np.Items)
				require.Equal(e, []string{"a", "b", "c"}, np.Items)
			}
		},
	})
}
