package conformance

import (
	"sync"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// List commands.
func init() {
	register(
		Case{
			Name: "list-basic",
			Commands: []string{"RPUSH", "LPUSH", "LPUSHX", "RPUSHX", "LRANGE", "LLEN", "LINDEX",
				"LINSERT", "LSET", "LREM", "LTRIM", "LPOS"},
			Run: func(e *Env) {
				l, missing := e.Key("l"), e.Key("missing")
				lrange := func(want ...string) {
					e.Helper()
					got, err := e.C.LRange(e.Ctx, l, 0, -1)
					require.NoError(e, err)
					require.Equal(e, want, got)
				}
				n, err := e.C.RPush(e.Ctx, l, "a", "b", "c")
				require.NoError(e, err)
				require.Equal(e, int64(3), n)
				n, err = e.C.LPush(e.Ctx, l, "z")
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				lrange("z", "a", "b", "c")
				n, err = e.C.LPushX(e.Ctx, missing, "x")
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.RPushX(e.Ctx, missing, "x")
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.RPushX(e.Ctx, l, "d")
				require.NoError(e, err)
				require.Equal(e, int64(5), n)
				n, err = e.C.LPushX(e.Ctx, l, "y", "x")
				require.NoError(e, err)
				require.Equal(e, int64(7), n)
				lrange("x", "y", "z", "a", "b", "c", "d")
				n, err = e.C.LLen(e.Ctx, l)
				require.NoError(e, err)
				require.Equal(e, int64(7), n)
				n, err = e.C.LLen(e.Ctx, missing)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				got, err := e.C.LRange(e.Ctx, l, 1, 2)
				require.NoError(e, err)
				require.Equal(e, []string{"y", "z"}, got)
				got, err = e.C.LRange(e.Ctx, l, -2, 100)
				require.NoError(e, err)
				require.Equal(e, []string{"c", "d"}, got)
				got, err = e.C.LRange(e.Ctx, missing, 0, -1)
				require.NoError(e, err)
				require.Empty(e, got)

				s, err := e.C.LIndex(e.Ctx, l, 0)
				require.NoError(e, err)
				require.Equal(e, "x", s)
				s, err = e.C.LIndex(e.Ctx, l, -1)
				require.NoError(e, err)
				require.Equal(e, "d", s)
				_, err = e.C.LIndex(e.Ctx, l, 100)
				caNil(e, err)

				require.NoError(e, e.C.LTrim(e.Ctx, l, 2, -1))
				lrange("z", "a", "b", "c", "d")

				n, err = e.C.LInsert(e.Ctx, l, respire.PositionBefore, "a", "A")
				require.NoError(e, err)
				require.Equal(e, int64(6), n)
				n, err = e.C.LInsert(e.Ctx, l, respire.PositionAfter, "d", "D")
				require.NoError(e, err)
				require.Equal(e, int64(7), n)
				lrange("z", "A", "a", "b", "c", "d", "D")
				n, err = e.C.LInsert(e.Ctx, l, respire.PositionAfter, "nope", "x")
				require.NoError(e, err)
				require.Equal(e, int64(-1), n)
				n, err = e.C.LInsert(e.Ctx, missing, respire.PositionAfter, "a", "x")
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				require.NoError(e, e.C.LSet(e.Ctx, l, 0, "Z"))
				require.NoError(e, e.C.LSet(e.Ctx, l, -1, "DD"))
				lrange("Z", "A", "a", "b", "c", "d", "DD")
				e.ServerError(e.C.LSet(e.Ctx, l, 100, "x"), "ERR")     // index out of range
				e.ServerError(e.C.LSet(e.Ctx, missing, 0, "x"), "ERR") // no such key

				_, err = e.C.RPush(e.Ctx, l, "a", "b", "a")
				require.NoError(e, err)
				lrange("Z", "A", "a", "b", "c", "d", "DD", "a", "b", "a")
				n, err = e.C.LRem(e.Ctx, l, -1, "a")
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				lrange("Z", "A", "a", "b", "c", "d", "DD", "a", "b")
				n, err = e.C.LRem(e.Ctx, l, 0, "b")
				require.NoError(e, err)
				require.Equal(e, int64(2), n)
				n, err = e.C.LRem(e.Ctx, l, 1, "a")
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				lrange("Z", "A", "c", "d", "DD", "a")
				n, err = e.C.LRem(e.Ctx, l, 0, "nope")
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				// LPOS, the examples of the command's documentation.
				p := e.Key("pos")
				e.Do("RPUSH", p, "a", "b", "c", "1", "2", "3", "c", "c")
				for _, c := range []struct {
					opts *respire.LPosOptions
					want int64
				}{
					{nil, 2},
					{&respire.LPosOptions{Rank: 2}, 6},
					{&respire.LPosOptions{Rank: -1}, 7},
					{&respire.LPosOptions{MaxLen: 3}, 2},
				} {
					n, err = e.C.LPos(e.Ctx, p, "c", c.opts)
					require.NoError(e, err)
					require.Equal(e, c.want, n, "%+v", c.opts)
				}
				_, err = e.C.LPos(e.Ctx, p, "c", &respire.LPosOptions{MaxLen: 2})
				caNil(e, err)
				_, err = e.C.LPos(e.Ctx, p, "nope", nil)
				caNil(e, err)
				_, err = e.C.LPos(e.Ctx, missing, "a", nil)
				caNil(e, err)
				ns, err := e.C.LPosCount(e.Ctx, p, "c", 2, nil)
				require.NoError(e, err)
				require.Equal(e, []int64{2, 6}, ns)
				ns, err = e.C.LPosCount(e.Ctx, p, "c", 0, nil)
				require.NoError(e, err)
				require.Equal(e, []int64{2, 6, 7}, ns)
				ns, err = e.C.LPosCount(e.Ctx, p, "c", 0, &respire.LPosOptions{Rank: -1, MaxLen: 3})
				require.NoError(e, err)
				require.Equal(e, []int64{7, 6}, ns)
				ns, err = e.C.LPosCount(e.Ctx, p, "nope", 0, nil)
				require.NoError(e, err)
				require.Empty(e, ns)
				// RANK 0 is refused by the server, so Rank's zero sends nothing.
				n, err = e.C.LPos(e.Ctx, p, "c", &respire.LPosOptions{Rank: 0})
				require.NoError(e, err)
				require.Equal(e, int64(2), n)

				e.Do("SET", e.Key("str"), "v")
				_, err = e.C.LPush(e.Ctx, e.Key("str"), "x")
				e.ServerError(err, "WRONGTYPE")
				_, err = e.C.LRange(e.Ctx, e.Key("str"), 0, -1)
				e.ServerError(err, "WRONGTYPE")
			},
		},
		Case{
			Name:     "list-pop-move",
			Commands: []string{"LPOP", "RPOP", "LMOVE", "RPOPLPUSH", "LMPOP"},
			Run: func(e *Env) {
				l, missing := e.Key("l"), e.Key("missing")
				e.Do("RPUSH", l, "a", "b", "c", "d", "e")
				s, err := e.C.LPop(e.Ctx, l)
				require.NoError(e, err)
				require.Equal(e, "a", s)
				s, err = e.C.RPop(e.Ctx, l)
				require.NoError(e, err)
				require.Equal(e, "e", s)
				ss, err := e.C.LPopCount(e.Ctx, l, 2)
				require.NoError(e, err)
				require.Equal(e, []string{"b", "c"}, ss)
				ss, err = e.C.RPopCount(e.Ctx, l, 5)
				require.NoError(e, err)
				require.Equal(e, []string{"d"}, ss)
				_, err = e.C.LPop(e.Ctx, l)
				caNil(e, err)
				_, err = e.C.RPop(e.Ctx, l)
				caNil(e, err)
				_, err = e.C.LPopCount(e.Ctx, missing, 2)
				caNil(e, err)
				_, err = e.C.RPopCount(e.Ctx, missing, 2)
				caNil(e, err)
				e.Do("RPUSH", l, "a", "b")
				ss, err = e.C.RPopCount(e.Ctx, l, 2)
				require.NoError(e, err)
				require.Equal(e, []string{"b", "a"}, ss)

				src, dst := e.Key("src"), e.Key("dst")
				e.Do("RPUSH", src, "a", "b", "c")
				s, err = e.C.LMove(e.Ctx, src, dst, respire.SideLeft, respire.SideRight)
				require.NoError(e, err)
				require.Equal(e, "a", s)
				s, err = e.C.LMove(e.Ctx, src, dst, respire.SideRight, respire.SideLeft)
				require.NoError(e, err)
				require.Equal(e, "c", s)
				s, err = e.C.RPopLPush(e.Ctx, src, dst)
				require.NoError(e, err)
				require.Equal(e, "b", s)
				got, err := e.C.LRange(e.Ctx, dst, 0, -1)
				require.NoError(e, err)
				require.Equal(e, []string{"b", "c", "a"}, got)
				_, err = e.C.LMove(e.Ctx, src, dst, respire.SideLeft, respire.SideLeft)
				caNil(e, err)
				_, err = e.C.RPopLPush(e.Ctx, src, dst)
				caNil(e, err)
				s, err = e.C.RPopLPush(e.Ctx, dst, dst) // rotation
				require.NoError(e, err)
				require.Equal(e, "a", s)

				l2 := e.Key("l2")
				e.Do("RPUSH", l2, "1", "2", "3", "4")
				ke, err := e.C.LMPop(e.Ctx, []string{missing, l2}, respire.SideLeft, nil)
				require.NoError(e, err)
				require.Equal(e, respire.KeyElements{Key: l2, Elements: []string{"1"}}, ke)
				ke, err = e.C.LMPop(e.Ctx, []string{l2}, respire.SideRight, &respire.LMPopOptions{Count: 2})
				require.NoError(e, err)
				require.Equal(e, respire.KeyElements{Key: l2, Elements: []string{"4", "3"}}, ke)
				ke, err = e.C.LMPop(e.Ctx, []string{l2, dst}, respire.SideLeft, &respire.LMPopOptions{Count: 10})
				require.NoError(e, err)
				require.Equal(e, respire.KeyElements{Key: l2, Elements: []string{"2"}}, ke)
				_, err = e.C.LMPop(e.Ctx, []string{missing, l2}, respire.SideLeft, nil)
				caNil(e, err)
			},
		},
		Case{
			Name:     "list-blocking",
			Commands: []string{"BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BLMPOP"},
			Run: func(e *Env) {
				l, d, missing := e.Key("l"), e.Key("d"), e.Key("missing")
				e.Do("RPUSH", l, "a", "b", "c", "d", "e", "f")
				ke, err := e.C.BLPop(e.Ctx, time.Second, missing, l)
				require.NoError(e, err)
				require.Equal(e, respire.KeyElement{Key: l, Element: "a"}, ke)
				ke, err = e.C.BRPop(e.Ctx, time.Second, missing, l)
				require.NoError(e, err)
				require.Equal(e, respire.KeyElement{Key: l, Element: "f"}, ke)
				s, err := e.C.BLMove(e.Ctx, l, d, respire.SideLeft, respire.SideRight, time.Second)
				require.NoError(e, err)
				require.Equal(e, "b", s)
				s, err = e.C.BRPopLPush(e.Ctx, l, d, time.Second)
				require.NoError(e, err)
				require.Equal(e, "e", s)
				got, err := e.C.LRange(e.Ctx, d, 0, -1)
				require.NoError(e, err)
				require.Equal(e, []string{"e", "b"}, got)
				kes, err := e.C.BLMPop(e.Ctx, time.Second, []string{missing, l}, respire.SideLeft, &respire.BLMPopOptions{Count: 5})
				require.NoError(e, err)
				require.Equal(e, respire.KeyElements{Key: l, Elements: []string{"c", "d"}}, kes)
				kes, err = e.C.BLMPop(e.Ctx, time.Second, []string{d}, respire.SideRight, nil)
				require.NoError(e, err)
				require.Equal(e, respire.KeyElements{Key: d, Elements: []string{"b"}}, kes)

				// A short server-side timeout gives Nil. The server notices
				// timeouts only every 100ms (hz 10), so the five wait
				// together, each on its own blocking connection.
				const short = 10 * time.Millisecond
				calls := []func() error{
					func() error { _, err := e.C.BLPop(e.Ctx, short, missing); return err },
					func() error { _, err := e.C.BRPop(e.Ctx, short, missing, e.Key("missing2")); return err },
					func() error {
						_, err := e.C.BLMove(e.Ctx, missing, d, respire.SideRight, respire.SideLeft, short)
						return err
					},
					func() error { _, err := e.C.BRPopLPush(e.Ctx, missing, d, short); return err },
					func() error {
						_, err := e.C.BLMPop(e.Ctx, short, []string{missing}, respire.SideLeft, nil)
						return err
					},
				}
				errs := make([]error, len(calls))
				var wg sync.WaitGroup
				for i, f := range calls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[i] = f()
					}()
				}
				wg.Wait()
				for _, err := range errs {
					caNil(e, err)
				}

				e.Do("SET", e.Key("str"), "v")
				_, err = e.C.BLPop(e.Ctx, short, e.Key("str"))
				e.ServerError(err, "WRONGTYPE")
			},
		},
	)
}
