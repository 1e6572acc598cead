package conformance

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// Generic (keyspace) commands.
func init() {
	register(
		Case{
			Name:     "generic-keys",
			Commands: []string{"DEL", "EXISTS", "UNLINK", "TOUCH", "TYPE", "RENAME", "RENAMENX", "COPY"},
			Run: func(e *Env) {
				k1, k2, k3 := e.Key("1"), e.Key("2"), e.Key("3")
				missing := e.Key("missing")
				e.Do("MSET", k1, "v1", k2, "v2", k3, "v3")

				n, err := e.C.Exists(e.Ctx, k1, k2, k1, missing)
				require.NoError(e, err)
				require.Equal(e, int64(3), n)
				n, err = e.C.Touch(e.Ctx, k1, k2, missing)
				require.NoError(e, err)
				require.Equal(e, int64(2), n)
				n, err = e.C.Del(e.Ctx, k1, missing)
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.Unlink(e.Ctx, k2, missing)
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.Exists(e.Ctx, k1, k2)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.Del(e.Ctx, k1)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				e.Do("RPUSH", e.Key("list"), "a")
				e.Do("SADD", e.Key("set"), "a")
				e.Do("ZADD", e.Key("zset"), "1", "a")
				e.Do("HSET", e.Key("hash"), "f", "v")
				e.Do("XADD", e.Key("stream"), "*", "f", "v")
				for k, want := range map[string]string{
					k3: "string", e.Key("list"): "list", e.Key("set"): "set", e.Key("zset"): "zset",
					e.Key("hash"): "hash", e.Key("stream"): "stream", missing: "none",
				} {
					typ, err := e.C.Type(e.Ctx, k)
					require.NoError(e, err)
					require.Equal(e, want, typ, k)
				}

				k4, k5, k6, k7 := e.Key("4"), e.Key("5"), e.Key("6"), e.Key("7")
				require.NoError(e, e.C.Rename(e.Ctx, k3, k4))
				v, err := e.C.Get(e.Ctx, k4)
				require.NoError(e, err)
				require.Equal(e, "v3", v)
				e.ServerError(e.C.Rename(e.Ctx, missing, k5), "ERR") // no such key

				ok, err := e.C.RenameNX(e.Ctx, k4, k5)
				require.NoError(e, err)
				require.True(e, ok)
				e.Do("SET", k6, "v6")
				ok, err = e.C.RenameNX(e.Ctx, k5, k6)
				require.NoError(e, err)
				require.False(e, ok)
				_, err = e.C.RenameNX(e.Ctx, missing, k7)
				e.ServerError(err, "ERR")

				ok, err = e.C.Copy(e.Ctx, k5, k7, nil)
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.Copy(e.Ctx, k6, k7, nil)
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.Copy(e.Ctx, k6, k7, &respire.CopyOptions{Replace: true})
				require.NoError(e, err)
				require.True(e, ok)
				v, err = e.C.Get(e.Ctx, k7)
				require.NoError(e, err)
				require.Equal(e, "v6", v)
				ok, err = e.C.Copy(e.Ctx, missing, k7, &respire.CopyOptions{Replace: true})
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.Copy(e.Ctx, e.Key("list"), e.Key("list2"), nil)
				require.NoError(e, err)
				require.True(e, ok)
				l, err := e.C.LRange(e.Ctx, e.Key("list2"), 0, -1)
				require.NoError(e, err)
				require.Equal(e, []string{"a"}, l)
			},
		},
		Case{
			Name: "generic-expire",
			Commands: []string{"EXPIRE", "EXPIREAT", "EXPIRETIME", "PEXPIRE", "PEXPIREAT",
				"PEXPIRETIME", "PERSIST", "TTL", "PTTL"},
			Run: func(e *Env) {
				k, missing := e.Key("k"), e.Key("missing")
				e.Do("SET", k, "v")
				// No expiry: NoExpiry and the zero time; no key: Nil.
				for _, f := range []func(string) (time.Duration, error){
					func(k string) (time.Duration, error) { return e.C.TTL(e.Ctx, k) },
					func(k string) (time.Duration, error) { return e.C.PTTL(e.Ctx, k) },
				} {
					d, err := f(k)
					require.NoError(e, err)
					require.Equal(e, respire.NoExpiry, d, "no expiry")
					_, err = f(missing)
					caNil(e, err)
				}
				for _, f := range []func(string) (time.Time, error){
					func(k string) (time.Time, error) { return e.C.ExpireTime(e.Ctx, k) },
					func(k string) (time.Time, error) { return e.C.PExpireTime(e.Ctx, k) },
				} {
					at, err := f(k)
					require.NoError(e, err)
					require.True(e, at.IsZero(), "no expiry: %v", at)
					_, err = f(missing)
					caNil(e, err)
				}

				ok, err := e.C.Expire(e.Ctx, k, 100*time.Second, &respire.ExpireOptions{Condition: respire.ExpireConditionXX})
				require.NoError(e, err)
				require.False(e, ok, "XX on a key without expiry")
				ok, err = e.C.Expire(e.Ctx, k, 100*time.Second, nil)
				require.NoError(e, err)
				require.True(e, ok)
				ttl, err := e.C.TTL(e.Ctx, k)
				require.NoError(e, err)
				require.True(e, ttl > 90*time.Second && ttl <= 100*time.Second, "ttl %v", ttl)
				ok, err = e.C.Expire(e.Ctx, k, 50*time.Second, &respire.ExpireOptions{Condition: respire.ExpireConditionGT})
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.Expire(e.Ctx, k, 200*time.Second, &respire.ExpireOptions{Condition: respire.ExpireConditionGT})
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.Expire(e.Ctx, k, 10*time.Second, &respire.ExpireOptions{Condition: respire.ExpireConditionNX})
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.Expire(e.Ctx, missing, 10*time.Second, nil)
				require.NoError(e, err)
				require.False(e, ok)

				ok, err = e.C.PExpire(e.Ctx, k, 150*time.Second, &respire.PExpireOptions{Condition: respire.ExpireConditionLT})
				require.NoError(e, err)
				require.True(e, ok)
				pttl, err := e.C.PTTL(e.Ctx, k)
				require.NoError(e, err)
				require.True(e, pttl > 140*time.Second && pttl <= 150*time.Second, "pttl %v", pttl)
				ok, err = e.C.PExpire(e.Ctx, missing, time.Second, nil)
				require.NoError(e, err)
				require.False(e, ok)

				at := time.Now().Add(1000 * time.Second)
				ok, err = e.C.ExpireAt(e.Ctx, k, at, nil)
				require.NoError(e, err)
				require.True(e, ok)
				et, err := e.C.ExpireTime(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, at.Unix(), et.Unix())
				require.Zero(e, et.Nanosecond(), "whole seconds")
				ok, err = e.C.ExpireAt(e.Ctx, k, at.Add(-500*time.Second), &respire.ExpireAtOptions{Condition: respire.ExpireConditionGT})
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.ExpireAt(e.Ctx, missing, at, nil)
				require.NoError(e, err)
				require.False(e, ok)

				at = time.Now().Add(2000 * time.Second)
				ok, err = e.C.PExpireAt(e.Ctx, k, at, &respire.PExpireAtOptions{Condition: respire.ExpireConditionXX})
				require.NoError(e, err)
				require.True(e, ok)
				pet, err := e.C.PExpireTime(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, at.UnixMilli(), pet.UnixMilli())
				et, err = e.C.ExpireTime(e.Ctx, k)
				require.NoError(e, err)
				require.InDelta(e, at.UnixMilli()/1000, et.Unix(), 1) // rounded to the nearest second
				ttl, err = e.C.TTL(e.Ctx, k)
				require.NoError(e, err)
				require.True(e, ttl > 1990*time.Second && ttl <= 2000*time.Second, "ttl %v", ttl)

				ok, err = e.C.Persist(e.Ctx, k)
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.Persist(e.Ctx, k)
				require.NoError(e, err)
				require.False(e, ok)
				ttl, err = e.C.TTL(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, respire.NoExpiry, ttl)

				// An expiry in the past deletes the key.
				ok, err = e.C.PExpireAt(e.Ctx, k, time.Unix(1, 0), nil)
				require.NoError(e, err)
				require.True(e, ok)
				n, err := e.C.Exists(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
			},
		},
		Case{
			Name: "generic-dump-object",
			Commands: []string{"DUMP", "RESTORE", "OBJECT ENCODING", "OBJECT REFCOUNT",
				"OBJECT IDLETIME", "OBJECT HELP"},
			Run: func(e *Env) {
				k, missing := e.Key("k"), e.Key("missing")
				e.Do("SET", k, "hello")
				payload, err := e.C.Dump(e.Ctx, k)
				require.NoError(e, err)
				require.NotEmpty(e, payload)
				_, err = e.C.Dump(e.Ctx, missing)
				caNil(e, err)

				r := e.Key("r")
				require.NoError(e, e.C.Restore(e.Ctx, r, 0, payload, nil))
				v, err := e.C.Get(e.Ctx, r)
				require.NoError(e, err)
				require.Equal(e, "hello", v)
				ttl, err := e.C.TTL(e.Ctx, r)
				require.NoError(e, err)
				require.Equal(e, respire.NoExpiry, ttl)
				e.ServerError(e.C.Restore(e.Ctx, r, 0, payload, nil), "BUSYKEY")

				require.NoError(e, e.C.Restore(e.Ctx, r, 100000, payload, &respire.RestoreOptions{Replace: true}))
				pttl, err := e.C.PTTL(e.Ctx, r)
				require.NoError(e, err)
				require.True(e, pttl > 90*time.Second && pttl <= 100*time.Second, "pttl %v", pttl)

				at := time.Now().Add(500 * time.Second).UnixMilli()
				require.NoError(e, e.C.Restore(e.Ctx, r, at, payload, &respire.RestoreOptions{Replace: true, AbsTTL: true}))
				pet, err := e.C.PExpireTime(e.Ctx, r)
				require.NoError(e, err)
				require.Equal(e, at, pet.UnixMilli())

				require.NoError(e, e.C.Restore(e.Ctx, e.Key("idle"), 0, payload, &respire.RestoreOptions{IdleTime: 1000 * time.Second}))
				idle, err := e.C.ObjectIdleTime(e.Ctx, e.Key("idle"))
				require.NoError(e, err)
				require.True(e, idle >= 1000 && idle < 1100, "idle %d", idle)

				e.ServerError(e.C.Restore(e.Ctx, e.Key("bad"), 0, "not a payload", nil), "ERR")

				// A list survives the round trip too.
				e.Do("RPUSH", e.Key("list"), "a", "b", "c")
				lp, err := e.C.Dump(e.Ctx, e.Key("list"))
				require.NoError(e, err)
				require.NoError(e, e.C.Restore(e.Ctx, e.Key("list2"), 0, lp, nil))
				l, err := e.C.LRange(e.Ctx, e.Key("list2"), 0, -1)
				require.NoError(e, err)
				require.Equal(e, []string{"a", "b", "c"}, l)

				e.Do("SET", e.Key("int"), "12")
				e.Do("SET", e.Key("raw"), strings.Repeat("x", 100))
				for key, want := range map[string]string{k: "embstr", e.Key("int"): "int", e.Key("raw"): "raw"} {
					enc, err := e.C.ObjectEncoding(e.Ctx, key)
					require.NoError(e, err)
					require.Equal(e, want, enc, key)
				}
				enc, err := e.C.ObjectEncoding(e.Ctx, e.Key("list"))
				require.NoError(e, err)
				require.Contains(e, []string{"quicklist", "listpack"}, enc)
				_, err = e.C.ObjectEncoding(e.Ctx, missing)
				caNil(e, err)

				rc, err := e.C.ObjectRefCount(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, int64(1), rc)
				rc, err = e.C.ObjectRefCount(e.Ctx, e.Key("int"))
				require.NoError(e, err)
				require.True(e, rc >= 1, "refcount %d", rc) // shared integers on Redis: INT_MAX
				_, err = e.C.ObjectRefCount(e.Ctx, missing)
				caNil(e, err)

				idle, err = e.C.ObjectIdleTime(e.Ctx, k)
				require.NoError(e, err)
				require.True(e, idle >= 0 && idle < 30, "idle %d", idle)
				_, err = e.C.ObjectIdleTime(e.Ctx, missing)
				caNil(e, err)

				help, err := e.C.ObjectHelp(e.Ctx)
				require.NoError(e, err)
				require.Greater(e, len(help), 4)
				joined := strings.Join(help, "\n")
				for _, sub := range []string{"ENCODING", "FREQ", "IDLETIME", "REFCOUNT"} {
					require.Contains(e, joined, sub)
				}
			},
		},
		Case{
			Name:     "generic-scan-keys",
			Commands: []string{"SCAN", "KEYS"},
			Run: func(e *Env) {
				var want []string
				for i := 0; i < 25; i++ {
					k := e.Key(fmt.Sprintf("scan:%02d", i))
					e.Do("SET", k, "v")
					want = append(want, k)
				}
				e.Do("RPUSH", e.Key("scan:list"), "a")
				want = append(want, e.Key("scan:list"))
				e.Do("SET", e.Key("other"), "v")

				got := map[string]bool{}
				cursor, calls := int64(0), 0
				for {
					page, err := e.C.Scan(e.Ctx, cursor, &respire.ScanOptions{Match: e.Key("scan:*"), Count: 10})
					require.NoError(e, err)
					for _, k := range page.Items {
						got[k] = true
					}
					calls++
					cursor = page.Cursor
					require.GreaterOrEqual(e, cursor, int64(0))
					if cursor == 0 {
						break
					}
					require.Less(e, calls, 10000)
				}
				require.Equal(e, caSorted(want), caSorted(caKeysOf(got)))

				got = map[string]bool{}
				for cursor = 0; ; {
					page, err := e.C.Scan(e.Ctx, cursor, &respire.ScanOptions{Match: e.Key("scan:*"), Type: "list"})
					require.NoError(e, err)
					for _, k := range page.Items {
						got[k] = true
					}
					if cursor = page.Cursor; cursor == 0 {
						break
					}
				}
				require.Equal(e, []string{e.Key("scan:list")}, caKeysOf(got))

				keys, err := e.C.Keys(e.Ctx, e.Key("scan:*"))
				require.NoError(e, err)
				require.Equal(e, caSorted(want), caSorted(keys))
				keys, err = e.C.Keys(e.Ctx, e.Key("nothing:*"))
				require.NoError(e, err)
				require.Empty(e, keys)
			},
		},
		Case{
			// Commands that see or change the whole keyspace or other
			// databases, on a server of their own; LFU for OBJECT FREQ.
			Name:     "generic-own-server",
			Commands: []string{"RANDOMKEY", "MOVE", "OBJECT FREQ", "MIGRATE"},
			Server:   "own",
			Config:   harness.Config{Args: []string{"maxmemory-policy allkeys-lfu"}},
			Run: func(e *Env) {
				_, err := e.C.RandomKey(e.Ctx)
				caNil(e, err)
				k := e.Key("k")
				e.Do("SET", k, "v")
				rk, err := e.C.RandomKey(e.Ctx)
				require.NoError(e, err)
				require.Equal(e, k, rk)

				// MOVE to db 1, checked through a client of db 1.
				db1, err := respire.Connect(e.Ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto, DB: 1})
				require.NoError(e, err)
				defer db1.Close()
				ok, err := e.C.Move(e.Ctx, k, 1)
				require.NoError(e, err)
				require.True(e, ok)
				n, err := e.C.Exists(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				v, err := db1.Get(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, "v", v)
				ok, err = e.C.Move(e.Ctx, k, 1)
				require.NoError(e, err)
				require.False(e, ok, "missing source")
				e.Do("SET", k, "v0")
				ok, err = e.C.Move(e.Ctx, k, 1)
				require.NoError(e, err)
				require.False(e, ok, "existing target")
				_, err = e.C.Move(e.Ctx, k, 0)
				e.ServerError(err, "ERR") // same source and target
				// COPY ... DB as well.
				ok, err = e.C.Copy(e.Ctx, k, e.Key("copied"), &respire.CopyOptions{DB: caPtr(int64(1))})
				require.NoError(e, err)
				require.True(e, ok)
				v, err = db1.Get(e.Ctx, e.Key("copied"))
				require.NoError(e, err)
				require.Equal(e, "v0", v)

				// OBJECT FREQ: a new key starts at the LFU initial value.
				f, err := e.C.ObjectFreq(e.Ctx, k)
				require.NoError(e, err)
				require.True(e, f >= 1 && f <= 255, "freq %d", f)
				payload, err := e.C.Dump(e.Ctx, k)
				require.NoError(e, err)
				require.NoError(e, e.C.Restore(e.Ctx, e.Key("freq"), 0, payload, &respire.RestoreOptions{Freq: caPtr(int64(100))}))
				f, err = e.C.ObjectFreq(e.Ctx, e.Key("freq"))
				require.NoError(e, err)
				require.InDelta(e, 100, f, 1) // decays by 1 per minute boundary crossed
				_, err = e.C.ObjectFreq(e.Ctx, e.Key("missing"))
				caNil(e, err)

				// MIGRATE to a second server.
				dst := harness.Start(e.T, harness.Config{Flavor: e.Flavor})
				host, ps, err := net.SplitHostPort(dst.Addr)
				require.NoError(e, err)
				port, err := strconv.ParseInt(ps, 10, 64)
				require.NoError(e, err)
				s, err := e.C.Migrate(e.Ctx, host, port, e.Key("missing"), 0, 5*time.Second, nil)
				require.NoError(e, err)
				require.Equal(e, "NOKEY", s)
				s, err = e.C.Migrate(e.Ctx, host, port, k, 0, 5*time.Second, nil)
				require.NoError(e, err)
				require.Equal(e, "OK", s)
				n, err = e.C.Exists(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				got, err := dst.Do(e.Ctx, "GET", k)
				require.NoError(e, err)
				require.EqualValues(e, "v0", fmt.Sprint(got))

				e.Do("MSET", e.Key("m1"), "a", e.Key("m2"), "b")
				s, err = e.C.Migrate(e.Ctx, host, port, "", 0, 5*time.Second, &respire.MigrateOptions{Copy: true, Keys: []string{e.Key("m1"), e.Key("m2")}})
				require.NoError(e, err)
				require.Equal(e, "OK", s)
				n, err = e.C.Exists(e.Ctx, e.Key("m1"), e.Key("m2"))
				require.NoError(e, err)
				require.Equal(e, int64(2), n, "COPY keeps the source keys")
				got, err = dst.Do(e.Ctx, "MGET", e.Key("m1"), e.Key("m2"))
				require.NoError(e, err)
				require.Equal(e, "[a b]", fmt.Sprint(got))
				_, err = e.C.Migrate(e.Ctx, host, port, e.Key("m1"), 0, 5*time.Second, &respire.MigrateOptions{Copy: true})
				e.ServerError(err, "ERR") // target replied BUSYKEY
				e.Do("SET", e.Key("m1"), "a2")
				s, err = e.C.Migrate(e.Ctx, host, port, e.Key("m1"), 0, 5*time.Second, &respire.MigrateOptions{Replace: true})
				require.NoError(e, err)
				require.Equal(e, "OK", s)
				got, err = dst.Do(e.Ctx, "GET", e.Key("m1"))
				require.NoError(e, err)
				require.Equal(e, "a2", fmt.Sprint(got))
			},
		},
		Case{
			Name:     "generic-wait",
			Commands: []string{"WAIT"},
			Run: func(e *Env) {
				// Sent by itself a Client refuses it (it would run on a
				// connection without the caller's writes); in the batch
				// of the writes it runs on theirs.
				_, err := e.C.Wait(e.Ctx, 0, 0)
				var ae *respire.ArgError
				require.ErrorAs(e, err, &ae)
				b := e.C.NewBatch()
				b.Set(e.Key("k"), "v", nil)
				w := b.Wait(0, 0)
				require.NoError(e, b.Exec(e.Ctx))
				n, err := w.Result()
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				start := time.Now()
				b = e.C.NewBatch()
				b.Set(e.Key("k"), "w", nil)
				w = b.Wait(1, 20*time.Millisecond)
				require.NoError(e, b.Exec(e.Ctx))
				n, err = w.Result()
				require.NoError(e, err)
				require.Equal(e, int64(0), n, "no replicas")
				require.Less(e, time.Since(start), 5*time.Second)
			},
		},
		Case{
			Name:     "generic-waitaof",
			Commands: []string{"WAITAOF"},
			Probe: func(e *Env) error {
				_, err := e.C.WaitAOF(e.Ctx, 0, 0, 0)
				return err
			},
			Run: func(e *Env) {
				_, err := e.C.WaitAOF(e.Ctx, 0, 0, 0)
				var ae *respire.ArgError
				require.ErrorAs(e, err, &ae, "refused sent by itself")
				waitAOF := func(local int64) (respire.AofAck, error) {
					b := e.C.NewBatch()
					b.Set(e.Key("k"), "v", nil)
					w := b.WaitAOF(local, 0, 0)
					require.NoError(e, b.Exec(e.Ctx))
					return w.Result()
				}
				ack, err := waitAOF(0)
				require.NoError(e, err)
				// The shared server runs without AOF, unless another case
				// turned it on.
				cfg, err := e.C.ConfigGet(e.Ctx, "appendonly")
				require.NoError(e, err)
				if cfg["appendonly"] == "no" {
					require.Equal(e, respire.AofAck{Local: 0, Replicas: 0}, ack)
					_, err = waitAOF(1)
					e.ServerError(err, "ERR") // appendonly is off
				} else {
					require.Contains(e, []int64{0, 1}, ack.Local)
					require.Equal(e, int64(0), ack.Replicas)
				}
			},
		},
	)
}

// caKeysOf returns the keys of m.
func caKeysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
