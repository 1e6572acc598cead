package conformance

import (
	"fmt"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// Set commands, and SORT / SORT_RO.
func init() {
	register(
		Case{
			Name: "set-basic",
			Commands: []string{"SADD", "SREM", "SCARD", "SMEMBERS", "SISMEMBER", "SMISMEMBER",
				"SMOVE", "SPOP", "SRANDMEMBER", "SSCAN"},
			Run: func(e *Env) {
				s, missing := e.Key("s"), e.Key("missing")
				n, err := e.C.SAdd(e.Ctx, s, "a", "b", "c", "a")
				require.NoError(e, err)
				require.Equal(e, int64(3), n)
				n, err = e.C.SAdd(e.Ctx, s, "c", "d")
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.SCard(e.Ctx, s)
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				n, err = e.C.SCard(e.Ctx, missing)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				m, err := e.C.SMembers(e.Ctx, s)
				require.NoError(e, err)
				require.Equal(e, []string{"a", "b", "c", "d"}, caSorted(m))
				m, err = e.C.SMembers(e.Ctx, missing)
				require.NoError(e, err)
				require.Empty(e, m)

				ok, err := e.C.SIsMember(e.Ctx, s, "a")
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.SIsMember(e.Ctx, s, "z")
				require.NoError(e, err)
				require.False(e, ok)
				bs, err := e.C.SMIsMember(e.Ctx, s, "a", "z", "d")
				require.NoError(e, err)
				require.Equal(e, []bool{true, false, true}, bs)
				bs, err = e.C.SMIsMember(e.Ctx, missing, "a")
				require.NoError(e, err)
				require.Equal(e, []bool{false}, bs)

				n, err = e.C.SRem(e.Ctx, s, "d", "z")
				require.NoError(e, err)
				require.Equal(e, int64(1), n)

				t := e.Key("t")
				ok, err = e.C.SMove(e.Ctx, s, t, "c")
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.SMove(e.Ctx, s, t, "c")
				require.NoError(e, err)
				require.False(e, ok)
				m, err = e.C.SMembers(e.Ctx, t)
				require.NoError(e, err)
				require.Equal(e, []string{"c"}, m)

				// s is {a, b}.
				r, err := e.C.SRandMember(e.Ctx, s)
				require.NoError(e, err)
				require.Contains(e, []string{"a", "b"}, r)
				rs, err := e.C.SRandMemberCount(e.Ctx, s, 5)
				require.NoError(e, err)
				require.Equal(e, []string{"a", "b"}, caSorted(rs))
				rs, err = e.C.SRandMemberCount(e.Ctx, s, -5)
				require.NoError(e, err)
				require.Len(e, rs, 5)
				for _, x := range rs {
					require.Contains(e, []string{"a", "b"}, x)
				}
				_, err = e.C.SRandMember(e.Ctx, missing)
				caNil(e, err)
				rs, err = e.C.SRandMemberCount(e.Ctx, missing, 3)
				require.NoError(e, err)
				require.Empty(e, rs)

				p, err := e.C.SPop(e.Ctx, s)
				require.NoError(e, err)
				require.Contains(e, []string{"a", "b"}, p)
				ps, err := e.C.SPopCount(e.Ctx, s, 3)
				require.NoError(e, err)
				require.Len(e, ps, 1)
				require.ElementsMatch(e, []string{"a", "b"}, []string{p, ps[0]})
				_, err = e.C.SPop(e.Ctx, s)
				caNil(e, err)
				ps, err = e.C.SPopCount(e.Ctx, missing, 2)
				require.NoError(e, err)
				require.Empty(e, ps)

				// SSCAN to the end of the cursor.
				big := e.Key("big")
				var want []string
				for i := 0; i < 300; i++ {
					want = append(want, fmt.Sprintf("m%03d", i))
				}
				args := []any{"SADD", big}
				for _, w := range want {
					args = append(args, w)
				}
				e.Do(args...)
				seen := map[string]bool{}
				cursor, calls := int64(0), 0
				for {
					page, err := e.C.SScan(e.Ctx, big, cursor, &respire.SScanOptions{Count: 50})
					require.NoError(e, err)
					for _, x := range page.Items {
						seen[x] = true
					}
					calls++
					require.Less(e, calls, 10000)
					if cursor = page.Cursor; cursor == 0 {
						break
					}
				}
				require.Equal(e, want, caSorted(caKeysOf(seen)))
				require.Greater(e, calls, 1, "a set of 300 takes more than one page")
				page, err := e.C.SScan(e.Ctx, big, 0, &respire.SScanOptions{Match: "m29*", Count: 1000})
				require.NoError(e, err)
				require.Equal(e, int64(0), page.Cursor)
				require.Equal(e, []string{"m290", "m291", "m292", "m293", "m294", "m295", "m296", "m297", "m298", "m299"}, caSorted(page.Items))
				page, err = e.C.SScan(e.Ctx, missing, 0, nil)
				require.NoError(e, err)
				require.Equal(e, int64(0), page.Cursor)
				require.Empty(e, page.Items)

				e.Do("SET", e.Key("str"), "v")
				_, err = e.C.SAdd(e.Ctx, e.Key("str"), "x")
				e.ServerError(err, "WRONGTYPE")
			},
		},
		Case{
			Name: "set-algebra",
			Commands: []string{"SDIFF", "SDIFFSTORE", "SINTER", "SINTERSTORE", "SINTERCARD",
				"SUNION", "SUNIONSTORE"},
			Run: func(e *Env) {
				a, b, c, d, missing := e.Key("a"), e.Key("b"), e.Key("c"), e.Key("d"), e.Key("missing")
				e.Do("SADD", a, "1", "2", "3", "4")
				e.Do("SADD", b, "3", "4", "5")
				e.Do("SADD", c, "4", "6")

				m, err := e.C.SDiff(e.Ctx, a, b)
				require.NoError(e, err)
				require.Equal(e, []string{"1", "2"}, caSorted(m))
				m, err = e.C.SDiff(e.Ctx, a, b, c, missing)
				require.NoError(e, err)
				require.Equal(e, []string{"1", "2"}, caSorted(m))
				m, err = e.C.SDiff(e.Ctx, missing, a)
				require.NoError(e, err)
				require.Empty(e, m)
				n, err := e.C.SDiffStore(e.Ctx, d, b, a)
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				m, err = e.C.SMembers(e.Ctx, d)
				require.NoError(e, err)
				require.Equal(e, []string{"5"}, m)

				m, err = e.C.SInter(e.Ctx, a, b)
				require.NoError(e, err)
				require.Equal(e, []string{"3", "4"}, caSorted(m))
				m, err = e.C.SInter(e.Ctx, a, b, c)
				require.NoError(e, err)
				require.Equal(e, []string{"4"}, m)
				m, err = e.C.SInter(e.Ctx, a, missing)
				require.NoError(e, err)
				require.Empty(e, m)
				n, err = e.C.SInterStore(e.Ctx, d, a, b)
				require.NoError(e, err)
				require.Equal(e, int64(2), n)
				m, err = e.C.SMembers(e.Ctx, d)
				require.NoError(e, err)
				require.Equal(e, []string{"3", "4"}, caSorted(m))
				n, err = e.C.SInterStore(e.Ctx, d, a, missing)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				x, err := e.C.Exists(e.Ctx, d)
				require.NoError(e, err)
				require.Equal(e, int64(0), x, "an empty result deletes the destination")

				n, err = e.C.SInterCard(e.Ctx, []string{a, b}, nil)
				require.NoError(e, err)
				require.Equal(e, int64(2), n)
				n, err = e.C.SInterCard(e.Ctx, []string{a, b}, &respire.SInterCardOptions{Limit: 1})
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.SInterCard(e.Ctx, []string{a, b, c}, &respire.SInterCardOptions{Limit: 0})
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.SInterCard(e.Ctx, []string{a, missing}, nil)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				m, err = e.C.SUnion(e.Ctx, a, b, c, missing)
				require.NoError(e, err)
				require.Equal(e, []string{"1", "2", "3", "4", "5", "6"}, caSorted(m))
				n, err = e.C.SUnionStore(e.Ctx, d, b, c)
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				m, err = e.C.SMembers(e.Ctx, d)
				require.NoError(e, err)
				require.Equal(e, []string{"3", "4", "5", "6"}, caSorted(m))

				e.Do("SET", e.Key("str"), "v")
				_, err = e.C.SUnion(e.Ctx, a, e.Key("str"))
				e.ServerError(err, "WRONGTYPE")
			},
		},
		Case{
			Name:     "sort",
			Commands: []string{"SORT", "SORT_RO"},
			Run: func(e *Env) {
				l, dst := e.Key("l"), e.Key("dst")
				e.Do("RPUSH", l, "3", "1", "2", "10")
				vals := func(ss ...string) []respire.Null[string] {
					out := make([]*string, len(ss))
					for i := range ss {
						if ss[i] != "<nil>" {
							out[i] = caS(ss[i])
						}
					}
					return caNulls(out...)
				}
				r, err := e.C.Sort(e.Ctx, l, nil)
				require.NoError(e, err)
				require.Equal(e, vals("1", "2", "3", "10"), r)
				r, err = e.C.Sort(e.Ctx, l, &respire.SortOptions{Order: respire.OrderDesc, Limit: &respire.Limit{Offset: 1, Count: 2}})
				require.NoError(e, err)
				require.Equal(e, vals("3", "2"), r)
				r, err = e.C.Sort(e.Ctx, l, &respire.SortOptions{Alpha: true, Order: respire.OrderAsc})
				require.NoError(e, err)
				require.Equal(e, vals("1", "10", "2", "3"), r)

				// BY and GET patterns: weights and objects in other keys;
				// a missing object is a null.
				e.Do("MSET", e.Key("w_1"), "30", e.Key("w_2"), "20", e.Key("w_3"), "10", e.Key("w_10"), "40",
					e.Key("o_1"), "one", e.Key("o_3"), "three")
				r, err = e.C.Sort(e.Ctx, l, &respire.SortOptions{BY: e.Key("w_*"), Get: []string{"#", e.Key("o_*")}})
				require.NoError(e, err)
				require.Equal(e, vals("3", "three", "2", "<nil>", "1", "one", "10", "<nil>"), r)
				r, err = e.C.Sort(e.Ctx, l, &respire.SortOptions{BY: "nosort"})
				require.NoError(e, err)
				require.Equal(e, vals("3", "1", "2", "10"), r)

				n, err := e.C.SortStore(e.Ctx, l, dst, &respire.SortOptions{Order: respire.OrderDesc})
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				got, err := e.C.LRange(e.Ctx, dst, 0, -1)
				require.NoError(e, err)
				require.Equal(e, []string{"10", "3", "2", "1"}, got)

				e.Do("SADD", e.Key("set"), "b", "c", "a")
				r, err = e.C.SortRO(e.Ctx, e.Key("set"), &respire.SortROOptions{Alpha: true})
				require.NoError(e, err)
				require.Equal(e, vals("a", "b", "c"), r)
				r, err = e.C.SortRO(e.Ctx, l, &respire.SortROOptions{Order: respire.OrderDesc, Limit: &respire.Limit{Offset: 0, Count: 1}})
				require.NoError(e, err)
				require.Equal(e, vals("10"), r)
				r, err = e.C.SortRO(e.Ctx, e.Key("missing"), nil)
				require.NoError(e, err)
				require.Empty(e, r)
				r, err = e.C.SortRO(e.Ctx, l, &respire.SortROOptions{BY: e.Key("w_*"), Get: []string{e.Key("o_*")}})
				require.NoError(e, err)
				require.Equal(e, vals("three", "<nil>", "one", "<nil>"), r)

				_, err = e.C.Sort(e.Ctx, e.Key("set"), nil)
				e.ServerError(err, "ERR") // not numbers without ALPHA
				e.Do("SET", e.Key("str"), "v")
				_, err = e.C.SortRO(e.Ctx, e.Key("str"), nil)
				e.ServerError(err, "WRONGTYPE")
			},
		},
	)
}
