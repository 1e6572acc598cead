package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplyAnyAndString: real replies of every type the server sends on
// RESP2 and RESP3, as plain Go values and as text.
func TestReplyAnyAndString(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		p := fmt.Sprintf("rany%d:", proto)
		resp3 := proto == 3
		do := func(args ...any) respire.Reply {
			t.Helper()
			r, err := c.Do(ctx, args...)
			require.NoError(t, err)
			return r
		}
		eval := func(script string) respire.Reply { t.Helper(); return do("EVAL", script, 0) }

		ok := do("SET", p+"s", "hello world")
		assert.Equal(t, "OK", ok.Any())
		assert.Equal(t, "OK", ok.String())
		get := do("GET", p+"s")
		assert.Equal(t, "hello world", get.Any())
		assert.Equal(t, "hello world", get.String())
		n := do("INCRBY", p+"n", 42)
		assert.Equal(t, int64(42), n.Any())
		assert.Equal(t, "42", n.String())

		missing, err := c.Do(ctx, "GET", p+"missing")
		require.ErrorIs(t, err, respire.Nil)
		assert.Nil(t, missing.Any())
		assert.Equal(t, "(nil)", missing.String())

		do("RPUSH", p+"l", "a", "b c", 3)
		l := do("LRANGE", p+"l", 0, -1)
		assert.Equal(t, []any{"a", "b c", "3"}, l.Any())
		assert.Equal(t, `["a" "b c" "3"]`, l.String())
		empty := do("LRANGE", p+"nolist", 0, -1)
		assert.Equal(t, []any{}, empty.Any())
		assert.Equal(t, "[]", empty.String())

		do("HSET", p+"h", "f", "v")
		h := do("HGETALL", p+"h")
		do("SADD", p+"set", "m")
		set := do("SMEMBERS", p+"set")
		assert.Equal(t, []any{"m"}, set.Any())
		do("ZADD", p+"z", 1.5, "m")
		score := do("ZSCORE", p+"z", "m")
		if resp3 {
			assert.Equal(t, map[string]any{"f": "v"}, h.Any())
			assert.Equal(t, `{"f": "v"}`, h.String())
			assert.Equal(t, 1.5, score.Any())
			assert.Equal(t, "1.5", score.String())
		} else {
			assert.Equal(t, []any{"f", "v"}, h.Any(), "RESP2 sends maps as arrays")
			assert.Equal(t, "1.5", score.Any())
		}

		// Lua's RESP3 types: booleans, doubles, big numbers, verbatim
		// strings, maps and sets, and an error nested in an array.
		yes := eval(`redis.setresp(3); return true`)
		big := eval(`return {big_number="123456789012345678901234567890"}`)
		dbl := eval(`return {double=2.25}`)
		nested := eval(`return {1, redis.error_reply("MYERR boom"), {map={a=1}}, {set={x=true}}}`)
		if resp3 {
			assert.Equal(t, true, yes.Any())
			assert.Equal(t, "true", yes.String())
			assert.Equal(t, "123456789012345678901234567890", big.Any())
			assert.Equal(t, "123456789012345678901234567890", big.String())
			assert.Equal(t, 2.25, dbl.Any())
			v := nested.Any().([]any)
			require.Len(t, v, 4)
			assert.Equal(t, int64(1), v[0])
			var se *respire.Error
			require.ErrorAs(t, v[1].(error), &se)
			assert.Equal(t, "MYERR", se.Prefix)
			assert.Equal(t, map[string]any{"a": int64(1)}, v[2])
			assert.Equal(t, []any{"x"}, v[3])
			assert.Equal(t, `[1 (error) MYERR boom {"a": 1} ["x"]]`, nested.String())
		} else {
			assert.Equal(t, int64(1), yes.Any())
			assert.Equal(t, "2.25", dbl.Any(), "RESP2 sends a double as a string")
			v := nested.Any().([]any)
			require.Len(t, v, 4)
			require.ErrorContains(t, v[1].(error), "boom")
		}

		// A verbatim string (LATENCY DOCTOR, INFO on RESP3) reads as its
		// text without the format.
		info := do("CLIENT", "INFO")
		text, ok2 := info.Any().(string)
		require.True(t, ok2, "%T", info.Any())
		assert.Contains(t, text, "id=")
		assert.Equal(t, text, info.String())
	})
}

// TestScriptRunAnyArgs: Script.Run takes its arguments as Do does, and
// refuses a type it cannot send before sending anything.
func TestScriptRunAnyArgs(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := fmt.Sprintf("sargs%d", proto)
		echo := respire.NewScript(`return ARGV`)
		r, err := echo.Run(ctx, c, []string{k}, "s", []byte("b"), 7, int64(-8), uint64(9), 1.5, true, false, 250*time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, []any{"s", "b", "7", "-8", "9", "1.5", "1", "0", "250"}, r.Any())

		r, err = incrByScript.Run(ctx, c, []string{k}, 5)
		require.NoError(t, err)
		assert.Equal(t, int64(5), r.Any())
		r, err = incrByScript.RunRO(ctx, c, []string{k}, 1)
		require.Error(t, err, "a writing script is refused by EVALSHA_RO")

		_, err = echo.Run(ctx, c, []string{k}, struct{}{})
		var ae *respire.ArgError
		require.ErrorAs(t, err, &ae)
		assert.Contains(t, ae.Error(), "struct {}")
	})
}
