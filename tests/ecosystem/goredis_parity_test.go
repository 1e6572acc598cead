package ecosystem

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parityCase is one go-redis call, run once on go-redis's own client and
// once through the adapter, each time on keys set up afresh, on the same
// server: the two must give the same Go values and the same errors.
type parityCase struct {
	name  string
	setup func(ctx context.Context, c redis.Cmdable, p string)
	run   func(ctx context.Context, c redis.Cmdable, p string) (any, error)
	// norm, when set, removes what legitimately differs between two runs
	// (times, connection ids).
	norm func(v any) any
}

func must(err error) {
	if err != nil && err != redis.Nil {
		panic(err)
	}
}

// streamSetup makes a stream of three entries with fixed IDs and a group
// whose consumer c1 read two of them.
func streamSetup(ctx context.Context, c redis.Cmdable, p string) {
	for i, id := range []string{"1-1", "2-1", "3-1"} {
		must(c.XAdd(ctx, &redis.XAddArgs{Stream: p + "s", ID: id, Values: []any{"f", fmt.Sprint(i), "g", "x"}}).Err())
	}
	must(c.XGroupCreate(ctx, p+"s", "grp", "0").Err())
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "grp", Consumer: "c1", Streams: []string{p + "s", ">"}, Count: 2}).Err())
}

func clearTimes(v any) any {
	switch v := v.(type) {
	case *redis.XInfoStream:
		return v
	case []redis.XInfoConsumer:
		for i := range v {
			v[i].Idle, v[i].Inactive = 0, 0
		}
	case []redis.XPendingExt:
		for i := range v {
			v[i].Idle = 0
		}
	case *redis.XInfoStreamFull:
		for i := range v.Groups {
			for j := range v.Groups[i].Consumers {
				v.Groups[i].Consumers[j].SeenTime = time.Time{}
				v.Groups[i].Consumers[j].ActiveTime = time.Time{}
				for k := range v.Groups[i].Consumers[j].Pending {
					v.Groups[i].Consumers[j].Pending[k].DeliveryTime = time.Time{}
				}
			}
			for k := range v.Groups[i].Pending {
				v.Groups[i].Pending[k].DeliveryTime = time.Time{}
			}
		}
	}
	return v
}

var parityCases = []parityCase{
	{name: "XRange", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XRange(ctx, p+"s", "-", "+").Result()
	}},
	{name: "XRevRangeN", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XRevRangeN(ctx, p+"s", "+", "-", 2).Result()
	}},
	{name: "XRange empty", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XRange(ctx, p+"none", "-", "+").Result()
	}},
	{name: "XRead", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XRead(ctx, &redis.XReadArgs{Streams: []string{p + "s", "1-1"}}).Result()
	}},
	{name: "XRead block timeout", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XRead(ctx, &redis.XReadArgs{Streams: []string{p + "none", "$"}, Block: 10 * time.Millisecond}).Result()
	}},
	{name: "XReadGroup", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "grp", Consumer: "c2", Streams: []string{p + "s", ">"}}).Result()
	}},
	{name: "XReadGroup own history", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "grp", Consumer: "c1", Streams: []string{p + "s", "0"}}).Result()
	}},
	{name: "XReadGroup deleted entry", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		streamSetup(ctx, c, p)
		must(c.XDel(ctx, p+"s", "1-1").Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "grp", Consumer: "c1", Streams: []string{p + "s", "0"}}).Result()
	}},
	{name: "XPending", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XPending(ctx, p+"s", "grp").Result()
	}},
	{name: "XPendingExt", setup: streamSetup, norm: clearTimes, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: p + "s", Group: "grp", Start: "-", End: "+", Count: 10}).Result()
	}},
	{name: "XClaim", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XClaim(ctx, &redis.XClaimArgs{Stream: p + "s", Group: "grp", Consumer: "c2", Messages: []string{"1-1", "2-1"}}).Result()
	}},
	{name: "XClaimJustID", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XClaimJustID(ctx, &redis.XClaimArgs{Stream: p + "s", Group: "grp", Consumer: "c2", Messages: []string{"1-1"}}).Result()
	}},
	{name: "XAutoClaim", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		msgs, start, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: p + "s", Group: "grp", Consumer: "c2", Start: "0"}).Result()
		return []any{msgs, start}, err
	}},
	{name: "XInfoGroups", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XInfoGroups(ctx, p+"s").Result()
	}},
	{name: "XInfoConsumers", setup: streamSetup, norm: clearTimes, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XInfoConsumers(ctx, p+"s", "grp").Result()
	}},
	{name: "XInfoStream", setup: streamSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XInfoStream(ctx, p+"s").Result()
	}},
	{name: "XInfoStreamFull", setup: streamSetup, norm: clearTimes, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XInfoStreamFull(ctx, p+"s", 0).Result()
	}},
	{name: "XInfoStream missing", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.XInfoStream(ctx, p+"none").Result()
	}},
	{name: "GetToBuffer", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		must(c.Set(ctx, p+"k", "hello world", 0).Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		buf := make([]byte, 32)
		n, err := c.GetToBuffer(ctx, p+"k", buf).Result()
		return string(buf[:n]), err
	}},
	{name: "GetToBuffer missing", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.GetToBuffer(ctx, p+"none", make([]byte, 8)).Result()
	}},
	{name: "BZPopMax", setup: zSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.BZPopMax(ctx, time.Second, p+"none", p+"z").Result()
	}},
	{name: "BZPopMin", setup: zSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.BZPopMin(ctx, time.Second, p+"z").Result()
	}},
	{name: "BZPopMin timeout", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.BZPopMin(ctx, 10*time.Millisecond, p+"none").Result()
	}},
	{name: "ZMPop", setup: zSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		k, z, err := c.ZMPop(ctx, "max", 2, p+"z").Result()
		return []any{k, z}, err
	}},
	{name: "ZMPop empty", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		k, z, err := c.ZMPop(ctx, "max", 2, p+"none").Result()
		return []any{k, z}, err
	}},
	{name: "ZRandMemberWithScores", setup: zSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.ZRandMemberWithScores(ctx, p+"z", -1).Result()
	}, norm: func(v any) any { return len(v.([]redis.Z)) }},
	{name: "ZRankWithScore", setup: zSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.ZRankWithScore(ctx, p+"z", "b").Result()
	}},
	{name: "LMPop", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		must(c.RPush(ctx, p+"l", "a", "b", "c").Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		k, v, err := c.LMPop(ctx, "left", 2, p+"none", p+"l").Result()
		return []any{k, v}, err
	}},
	{name: "BLMPop timeout", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		k, v, err := c.BLMPop(ctx, 10*time.Millisecond, "left", 2, p+"none").Result()
		return []any{k, v}, err
	}},
	{name: "GeoRadius", setup: geoSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.GeoRadius(ctx, p+"g", 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", WithCoord: true, WithDist: true, WithGeoHash: true, Sort: "ASC"}).Result()
	}},
	{name: "GeoSearchLocation", setup: geoSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.GeoSearchLocation(ctx, p+"g", &redis.GeoSearchLocationQuery{GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km", Sort: "ASC"}, WithCoord: true, WithDist: true}).Result()
	}},
	{name: "GeoPos", setup: geoSetup, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.GeoPos(ctx, p+"g", "Palermo", "nowhere").Result()
	}},
	{name: "FunctionList", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		must(c.FunctionLoadReplace(ctx, "#!lua name=paritylib\nredis.register_function{function_name='parity_f', callback=function(keys, args) return 1 end, flags={'no-writes'}}").Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "paritylib", WithCode: true}).Result()
	}},
	{name: "VSim", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		for i, e := range []string{"a", "b", "c"} {
			must(c.VAdd(ctx, p+"v", e, &redis.VectorValues{Val: []float64{float64(i), 1}}).Err())
		}
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.VSimWithScores(ctx, p+"v", &redis.VectorRef{Name: "a"}).Result()
	}},
	{name: "Eval nested error", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.Eval(ctx, `return {1, redis.error_reply("MYERR boom"), {2, redis.error_reply("INNER x")}}`, nil).Result()
	}},
	{name: "Eval error", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.Eval(ctx, `return redis.error_reply("MYERR top")`, nil).Result()
	}},
	{name: "HRandFieldWithValues", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		must(c.HSet(ctx, p+"h", "a", "1").Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.HRandFieldWithValues(ctx, p+"h", 1).Result()
	}},
	{name: "LCS idx", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		must(c.MSet(ctx, p+"{l}1", "ohmytext", p+"{l}2", "mynewtext").Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.LCS(ctx, &redis.LCSQuery{Key1: p + "{l}1", Key2: p + "{l}2", Idx: true, WithMatchLen: true}).Result()
	}},
	{name: "SMembersMap", setup: func(ctx context.Context, c redis.Cmdable, p string) {
		must(c.SAdd(ctx, p+"set", "a", "b").Err())
	}, run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.SMembersMap(ctx, p+"set").Result()
	}},
	{name: "ClientInfo", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.ClientInfo(ctx).Result()
	}, norm: func(v any) any {
		ci := v.(*redis.ClientInfo)
		return ci.ID > 0 && ci.Addr != ""
	}},
	{name: "Info", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.InfoMap(ctx, "server").Result()
	}, norm: func(v any) any {
		m := v.(map[string]map[string]string)
		return m["Server"]["redis_version"]
	}},
	{name: "CommandInfo", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.Command(ctx).Result()
	}, norm: func(v any) any {
		m := v.(map[string]*redis.CommandInfo)
		return []any{len(m) > 100, m["get"], m["xread"]}
	}},
	{name: "SlowLogGet", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.SlowLogGet(ctx, -1).Result()
	}, norm: func(v any) any { return reflect.TypeOf(v).String() }},
	{name: "Latency", run: func(ctx context.Context, c redis.Cmdable, p string) (any, error) {
		return c.Latency(ctx).Result()
	}, norm: func(v any) any { return reflect.TypeOf(v).String() }},
}

func zSetup(ctx context.Context, c redis.Cmdable, p string) {
	must(c.ZAdd(ctx, p+"z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"}, redis.Z{Score: 3, Member: "c"}).Err())
}

func geoSetup(ctx context.Context, c redis.Cmdable, p string) {
	must(c.GeoAdd(ctx, p+"g",
		&redis.GeoLocation{Name: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
		&redis.GeoLocation{Name: "Catania", Longitude: 15.087269, Latitude: 37.502669}).Err())
}

// Every reply type the adapter hands to go-redis holds what go-redis's
// own client gives on the same server, on RESP2 and RESP3.
func TestGoRedisAdapterParity(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := ctxT(t)
			native := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: proto})
			t.Cleanup(func() { native.Close() })
			rdb, _ := adapter(t, respire.Options{Addr: srv.Addr, Protocol: proto})
			for _, tc := range parityCases {
				t.Run(tc.name, func(t *testing.T) {
					p := fmt.Sprintf("parity%d:%s:", proto, tc.name)
					var vals [2]any
					var errs [2]error
					for i, c := range []redis.Cmdable{native, rdb} {
						require.NoError(t, native.FlushDB(ctx).Err())
						if tc.setup != nil {
							tc.setup(ctx, native, p)
						}
						vals[i], errs[i] = tc.run(ctx, c, p)
						if tc.norm != nil && errs[i] == nil {
							vals[i] = tc.norm(vals[i])
						}
					}
					if errs[0] == nil {
						assert.NoError(t, errs[1])
					} else {
						require.Error(t, errs[1], "go-redis: %v", errs[0])
						assert.Equal(t, errs[0].Error(), errs[1].Error())
						assert.Equal(t, errs[0] == redis.Nil, errs[1] == redis.Nil, "redis.Nil itself")
					}
					assert.Equal(t, vals[0], vals[1])
				})
			}
		})
	}
}
