package conformance

import (
	"errors"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

func sm(m string, s float64) respire.ScoredMember { return respire.ScoredMember{Member: m, Score: s} }

func i64(n int64) *int64 { return &n }

// Sorted-set commands.
func init() {
	register(Case{
		Name:     "B_zset_basic",
		Commands: []string{"ZADD", "ZCARD", "ZSCORE", "ZMSCORE", "ZINCRBY", "ZRANK", "ZREVRANK", "ZREM", "ZCOUNT", "ZLEXCOUNT"},
		Run: func(e *Env) {
			k := e.Key("z")
			n, err := e.C.ZAdd(e.Ctx, k, []respire.ScoredMember{sm("a", 1), sm("b", 2), sm("c", 3.5)}, nil)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			n, err = e.C.ZAdd(e.Ctx, k, []respire.ScoredMember{sm("a", 1.5), sm("d", 4)}, &respire.ZAddOptions{CH: true})
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			n, err = e.C.ZAdd(e.Ctx, k, []respire.ScoredMember{sm("a", 0.5)}, &respire.ZAddOptions{Condition: respire.ExistenceXX, Comparison: respire.ComparisonGT, CH: true})
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			f, err := e.C.ZAddIncr(e.Ctx, k, []respire.ScoredMember{sm("a", 1)}, nil)
			require.NoError(e, err)
			require.Equal(e, 2.5, f)
			_, err = e.C.ZAddIncr(e.Ctx, k, []respire.ScoredMember{sm("a", 1)}, &respire.ZAddOptions{Condition: respire.ExistenceNX})
			require.True(e, errors.Is(err, respire.Nil), "ZADD NX INCR on existing member: %v", err)

			n, err = e.C.ZCard(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(4), n)

			f, err = e.C.ZScore(e.Ctx, k, "c")
			require.NoError(e, err)
			require.Equal(e, 3.5, f)
			_, err = e.C.ZScore(e.Ctx, k, "nope")
			require.True(e, errors.Is(err, respire.Nil), "ZSCORE missing: %v", err)

			ms, err := e.C.ZMScore(e.Ctx, k, "a", "nope", "d")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[float64]{{V: 2.5, Valid: true}, {}, {V: 4, Valid: true}}, ms)

			f, err = e.C.ZIncrBy(e.Ctx, k, -0.25, "d")
			require.NoError(e, err)
			require.Equal(e, 3.75, f)
			f, err = e.C.ZIncrBy(e.Ctx, k, math.Inf(1), "inf")
			require.NoError(e, err)
			require.True(e, math.IsInf(f, 1), "ZINCRBY +inf: %v", f)

			// Scores round-trip exactly, infinities included.
			fk := e.Key("floats")
			n, err = e.C.ZAdd(e.Ctx, fk, []respire.ScoredMember{sm("ninf", math.Inf(-1)), sm("tiny", 1e-300),
				sm("tenth", 0.1), sm("big", 1.2345678901234567e300), sm("neg", -42.125)}, nil)
			require.NoError(e, err)
			require.Equal(e, int64(5), n)
			fws, err := e.C.ZRangeWithScores(e.Ctx, fk, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("ninf", math.Inf(-1)), sm("neg", -42.125), sm("tiny", 1e-300),
				sm("tenth", 0.1), sm("big", 1.2345678901234567e300)}, fws)

			// a=2.5 b=2 c=3.5 d=3.75 inf=+inf
			r, err := e.C.ZRank(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, int64(1), r)
			r, err = e.C.ZRevRank(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, int64(3), r)
			_, err = e.C.ZRank(e.Ctx, k, "nope")
			require.True(e, errors.Is(err, respire.Nil), "ZRANK missing: %v", err)
			_, err = e.C.ZRevRank(e.Ctx, k, "nope")
			require.True(e, errors.Is(err, respire.Nil), "ZREVRANK missing: %v", err)
			if e.Flavor != harness.Redis70 { // WITHSCORE since 7.2
				rs, err := e.C.ZRankWithScore(e.Ctx, k, "c")
				require.NoError(e, err)
				require.Equal(e, respire.RankScore{Rank: 2, Score: 3.5}, rs)
				rs, err = e.C.ZRevRankWithScore(e.Ctx, k, "inf")
				require.NoError(e, err)
				require.Equal(e, int64(0), rs.Rank)
				require.True(e, math.IsInf(rs.Score, 1))
				_, err = e.C.ZRankWithScore(e.Ctx, k, "nope")
				require.True(e, errors.Is(err, respire.Nil), "ZRANK WITHSCORE missing: %v", err)
			}

			n, err = e.C.ZCount(e.Ctx, k, "2", "(3.75")
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			n, err = e.C.ZCount(e.Ctx, k, "-inf", "+inf")
			require.NoError(e, err)
			require.Equal(e, int64(5), n)

			n, err = e.C.ZRem(e.Ctx, k, "inf", "nope")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)

			lk := e.Key("lex")
			e.Do("ZADD", lk, "0", "a", "0", "b", "0", "c", "0", "d")
			n, err = e.C.ZLexCount(e.Ctx, lk, "[b", "+")
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			n, err = e.C.ZLexCount(e.Ctx, lk, "(a", "(d")
			require.NoError(e, err)
			require.Equal(e, int64(2), n)

			e.Do("SET", e.Key("s"), "x")
			_, err = e.C.ZAdd(e.Ctx, e.Key("s"), []respire.ScoredMember{sm("a", 1)}, nil)
			e.ServerError(err, "WRONGTYPE")
		},
	})

	register(Case{
		Name: "B_zset_range",
		Commands: []string{"ZRANGE", "ZRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGE", "ZREVRANGEBYSCORE",
			"ZREVRANGEBYLEX", "ZRANGESTORE"},
		Run: func(e *Env) {
			k := e.Key("z")
			e.Do("ZADD", k, "1", "a", "2", "b", "3", "c", "4.5", "d")
			all := []respire.ScoredMember{sm("a", 1), sm("b", 2), sm("c", 3), sm("d", 4.5)}

			m, err := e.C.ZRange(e.Ctx, k, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"a", "b", "c", "d"}, m)
			ws, err := e.C.ZRangeWithScores(e.Ctx, k, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, all, ws)
			ws, err = e.C.ZRangeByWithScores(e.Ctx, k, "(4.5", "2", respire.SortByByScore, &respire.ZRangeOptions{Rev: true})
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("c", 3), sm("b", 2)}, ws)
			m, err = e.C.ZRangeBy(e.Ctx, k, "-inf", "+inf", respire.SortByByScore, &respire.ZRangeOptions{Limit: &respire.Limit{Offset: 1, Count: 2}})
			require.NoError(e, err)
			require.Equal(e, []string{"b", "c"}, m)
			m, err = e.C.ZRange(e.Ctx, e.Key("none"), 0, -1, nil)
			require.NoError(e, err)
			require.Empty(e, m)

			m, err = e.C.ZRangeByScore(e.Ctx, k, "(1", "4.5", nil)
			require.NoError(e, err)
			require.Equal(e, []string{"b", "c", "d"}, m)
			ws, err = e.C.ZRangeByScoreWithScores(e.Ctx, k, "-inf", "+inf", &respire.ZRangeByScoreOptions{Limit: &respire.Limit{Offset: 2, Count: 5}})
			require.NoError(e, err)
			require.Equal(e, all[2:], ws)

			m, err = e.C.ZRevRange(e.Ctx, k, 0, 1)
			require.NoError(e, err)
			require.Equal(e, []string{"d", "c"}, m)
			ws, err = e.C.ZRevRangeWithScores(e.Ctx, k, -2, -1)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("b", 2), sm("a", 1)}, ws)

			m, err = e.C.ZRevRangeByScore(e.Ctx, k, "+inf", "2", nil)
			require.NoError(e, err)
			require.Equal(e, []string{"d", "c", "b"}, m)
			ws, err = e.C.ZRevRangeByScoreWithScores(e.Ctx, k, "3", "-inf", &respire.ZRevRangeByScoreOptions{Limit: &respire.Limit{Offset: 0, Count: 2}})
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("c", 3), sm("b", 2)}, ws)

			lk := e.Key("lex")
			e.Do("ZADD", lk, "0", "apple", "0", "banana", "0", "cherry", "0", "date")
			m, err = e.C.ZRangeByLex(e.Ctx, lk, "[banana", "+", nil)
			require.NoError(e, err)
			require.Equal(e, []string{"banana", "cherry", "date"}, m)
			m, err = e.C.ZRangeByLex(e.Ctx, lk, "-", "+", &respire.ZRangeByLexOptions{Limit: &respire.Limit{Offset: 1, Count: 1}})
			require.NoError(e, err)
			require.Equal(e, []string{"banana"}, m)
			m, err = e.C.ZRevRangeByLex(e.Ctx, lk, "(date", "-", nil)
			require.NoError(e, err)
			require.Equal(e, []string{"cherry", "banana", "apple"}, m)
			m, err = e.C.ZRevRangeByLex(e.Ctx, lk, "+", "-", &respire.ZRevRangeByLexOptions{Limit: &respire.Limit{Offset: 0, Count: 1}})
			require.NoError(e, err)
			require.Equal(e, []string{"date"}, m)
			m, err = e.C.ZRangeBy(e.Ctx, lk, "[c", "(d", respire.SortByByLex, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"cherry"}, m)

			dst := e.Key("dst")
			n, err := e.C.ZRangeStore(e.Ctx, dst, k, "2", "4.5", &respire.ZRangeStoreOptions{SortBy: respire.SortByByScore})
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			ws, err = e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, all[1:], ws)
			n, err = e.C.ZRangeStore(e.Ctx, dst, lk, "[b", "[c", &respire.ZRangeStoreOptions{SortBy: respire.SortByByLex})
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			n, err = e.C.ZRangeStore(e.Ctx, dst, k, "0", "1", &respire.ZRangeStoreOptions{Rev: true})
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			m, err = e.C.ZRange(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"c", "d"}, m)
		},
	})

	register(Case{
		Name:     "B_zset_remrange",
		Commands: []string{"ZREMRANGEBYLEX", "ZREMRANGEBYRANK", "ZREMRANGEBYSCORE"},
		Run: func(e *Env) {
			k := e.Key("z")
			e.Do("ZADD", k, "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
			n, err := e.C.ZRemRangeByRank(e.Ctx, k, 0, 1)
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			n, err = e.C.ZRemRangeByScore(e.Ctx, k, "(3", "4")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			m, err := e.C.ZRange(e.Ctx, k, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"c", "e"}, m)
			lk := e.Key("lex")
			e.Do("ZADD", lk, "0", "a", "0", "b", "0", "c", "0", "d")
			n, err = e.C.ZRemRangeByLex(e.Ctx, lk, "[b", "(d")
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			m, err = e.C.ZRange(e.Ctx, lk, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"a", "d"}, m)
		},
	})

	register(Case{
		Name: "B_zset_setops",
		Commands: []string{"ZUNION", "ZUNIONSTORE", "ZINTER", "ZINTERSTORE", "ZINTERCARD",
			"ZDIFF", "ZDIFFSTORE"},
		Run: func(e *Env) {
			k1, k2, dst := e.Key("z1"), e.Key("z2"), e.Key("dst")
			e.Do("ZADD", k1, "1", "a", "2", "b", "3", "c")
			e.Do("ZADD", k2, "10", "b", "20", "c", "30", "d")
			keys := []string{k1, k2}

			m, err := e.C.ZUnion(e.Ctx, keys, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"a", "b", "c", "d"}, m)
			ws, err := e.C.ZUnionWithScores(e.Ctx, keys, &respire.ZUnionOptions{Weights: []float64{2, 0.5}})
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("a", 2), sm("b", 9), sm("d", 15), sm("c", 16)}, ws)
			n, err := e.C.ZUnionStore(e.Ctx, dst, keys, &respire.ZUnionStoreOptions{Aggregate: respire.AggregateMax})
			require.NoError(e, err)
			require.Equal(e, int64(4), n)
			ws, err = e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("a", 1), sm("b", 10), sm("c", 20), sm("d", 30)}, ws)

			m, err = e.C.ZInter(e.Ctx, keys, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"b", "c"}, m)
			ws, err = e.C.ZInterWithScores(e.Ctx, keys, &respire.ZInterOptions{Aggregate: respire.AggregateMin})
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("b", 2), sm("c", 3)}, ws)
			n, err = e.C.ZInterStore(e.Ctx, dst, keys, &respire.ZInterStoreOptions{Weights: []float64{1, 1}})
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			ws, err = e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("b", 12), sm("c", 23)}, ws)

			n, err = e.C.ZInterCard(e.Ctx, keys, nil)
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			n, err = e.C.ZInterCard(e.Ctx, keys, &respire.ZInterCardOptions{Limit: 1})
			require.NoError(e, err)
			require.Equal(e, int64(1), n)

			m, err = e.C.ZDiff(e.Ctx, k1, k2)
			require.NoError(e, err)
			require.Equal(e, []string{"a"}, m)
			ws, err = e.C.ZDiffWithScores(e.Ctx, k2, k1)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("d", 30)}, ws)
			n, err = e.C.ZDiffStore(e.Ctx, dst, k1, k2)
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			ws, err = e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("a", 1)}, ws)
		},
	})

	register(Case{
		Name:     "B_zset_pop",
		Commands: []string{"ZPOPMIN", "ZPOPMAX", "ZMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP"},
		Run: func(e *Env) {
			k, k2 := e.Key("z"), e.Key("z2")
			e.Do("ZADD", k, "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f", "7", "g")

			p, err := e.C.ZPopMin(e.Ctx, k, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("a", 1)}, p)
			p, err = e.C.ZPopMax(e.Ctx, k, &respire.ZPopMaxOptions{Count: 2})
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("g", 7), sm("f", 6)}, p)
			p, err = e.C.ZPopMin(e.Ctx, e.Key("none"), &respire.ZPopMinOptions{Count: 2})
			require.NoError(e, err)
			require.Empty(e, p)

			// b c d e remain
			mp, err := e.C.ZMPop(e.Ctx, []string{k2, k}, respire.ScoreEndMin, &respire.ZMPopOptions{Count: 2})
			require.NoError(e, err)
			require.Equal(e, respire.KeyScoredMembers{Key: k, Members: []respire.ScoredMember{sm("b", 2), sm("c", 3)}}, mp)
			_, err = e.C.ZMPop(e.Ctx, []string{k2}, respire.ScoreEndMax, nil)
			require.True(e, errors.Is(err, respire.Nil), "ZMPOP on empty keys: %v", err)

			// d e remain
			bp, err := e.C.BZPopMax(e.Ctx, time.Second, k2, k)
			require.NoError(e, err)
			require.Equal(e, respire.KeyScoredMember{Key: k, Member: "e", Score: 5}, bp)
			bp, err = e.C.BZPopMin(e.Ctx, time.Second, k)
			require.NoError(e, err)
			require.Equal(e, respire.KeyScoredMember{Key: k, Member: "d", Score: 4}, bp)

			e.Do("ZADD", k2, "1.5", "x", "2.5", "y")
			bm, err := e.C.BZMPop(e.Ctx, time.Second, []string{k, k2}, respire.ScoreEndMax, &respire.BZMPopOptions{Count: 5})
			require.NoError(e, err)
			require.Equal(e, respire.KeyScoredMembers{Key: k2, Members: []respire.ScoredMember{sm("y", 2.5), sm("x", 1.5)}}, bm)

			// Everything is empty now: short server-side timeouts give Nil.
			// They run concurrently (each on its own blocking connection) to
			// keep the case short.
			errs := concurrently(
				func() error { _, err := e.C.BZPopMin(e.Ctx, 10*time.Millisecond, k); return err },
				func() error { _, err := e.C.BZPopMax(e.Ctx, 10*time.Millisecond, k, k2); return err },
				func() error {
					_, err := e.C.BZMPop(e.Ctx, 10*time.Millisecond, []string{k}, respire.ScoreEndMin, nil)
					return err
				},
			)
			for i, err := range errs {
				require.True(e, errors.Is(err, respire.Nil), "blocking pop %d timeout: %v", i, err)
			}
		},
	})

	register(Case{
		Name:     "B_zset_rand_scan",
		Commands: []string{"ZRANDMEMBER", "ZSCAN"},
		Run: func(e *Env) {
			k := e.Key("z")
			_, err := e.C.ZRandMember(e.Ctx, k)
			require.True(e, errors.Is(err, respire.Nil), "ZRANDMEMBER missing key: %v", err)
			e.Do("ZADD", k, "1", "a", "2", "b", "3.5", "c")
			want := map[string]float64{"a": 1, "b": 2, "c": 3.5}

			m, err := e.C.ZRandMember(e.Ctx, k)
			require.NoError(e, err)
			require.Contains(e, want, m)
			ms, err := e.C.ZRandMemberCount(e.Ctx, k, 5)
			require.NoError(e, err)
			sort.Strings(ms)
			require.Equal(e, []string{"a", "b", "c"}, ms)
			ms, err = e.C.ZRandMemberCount(e.Ctx, k, -4)
			require.NoError(e, err)
			require.Len(e, ms, 4)
			ws, err := e.C.ZRandMemberWithScores(e.Ctx, k, 3)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("a", 1), sm("b", 2), sm("c", 3.5)}, sortByScore(ws))

			page, err := e.C.ZScan(e.Ctx, k, 0, nil)
			require.NoError(e, err)
			require.Equal(e, int64(0), page.Cursor)
			require.Equal(e, []respire.ScoredMember{sm("a", 1), sm("b", 2), sm("c", 3.5)}, sortByScore(page.Items))
			page, err = e.C.ZScan(e.Ctx, k, 0, &respire.ZScanOptions{Match: "c", Count: 100})
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{sm("c", 3.5)}, page.Items)
		},
	})

	// ZSCAN NOSCORES (Valkey 8.1 only) in a case of its own: the generated
	// ZScan decodes every reply as (member, score) pairs, so the option
	// cannot be decoded yet.
	register(Case{
		Name:     "B_zscan_noscores",
		Commands: []string{"ZSCAN"},
		Run: func(e *Env) {
			k := e.Key("z")
			e.Do("ZADD", k, "1", "a", "2", "b", "3", "c")
			page, err := e.C.ZScan(e.Ctx, k, 0, &respire.ZScanOptions{Match: "*", Count: 10})
			require.NoError(e, err)
			require.Len(e, page.Items, 3)
			if !dValkey(e) {
				return
			}
			// NOSCORES (Valkey) gives members only: its own method.
			np, err := e.C.ZScanNoScores(e.Ctx, k, 0, nil)
			require.NoError(e, err)
			require.Equal(e, int64(0), np.Cursor)
			got := append([]string{}, np.Items...)
			sort.Strings(got)
			require.Equal(e, []string{"a", "b", "c"}, got)
		},
	})
}

// concurrently runs fs at once and returns their errors in order.
func concurrently(fs ...func() error) []error {
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f()
		}()
	}
	wg.Wait()
	return errs
}

func sortByScore(ws []respire.ScoredMember) []respire.ScoredMember {
	out := append([]respire.ScoredMember(nil), ws...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score < out[j].Score })
	return out
}
