package integration

import (
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var incrByScript = respire.NewScript(`return redis.call("INCRBY", KEYS[1], ARGV[1])`)

var readScript = respire.NewScript(`return {redis.call("GET", KEYS[1]), ARGV[1]}`)

// TestScriptLoadsOnceThenEvalSha: the first Run after SCRIPT FLUSH gets
// NOSCRIPT and loads the script; later runs are a single EVALSHA.
func TestScriptLoadsOnceThenEvalSha(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := "script:" + t.Name()
		require.NoError(t, c.ScriptFlush(ctx, nil))
		_, err := srv.Do(ctx, "CONFIG", "RESETSTAT")
		require.NoError(t, err)

		r, err := incrByScript.Run(ctx, c, []string{k}, "5")
		require.NoError(t, err)
		n, err := r.Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(5), n)
		assert.Equal(t, int64(1), cmdCalls(t, srv, `script\|load`))
		assert.Equal(t, int64(2), cmdCalls(t, srv, "evalsha"), "NOSCRIPT, then the run")

		r, err = incrByScript.Run(ctx, c, []string{k}, "2")
		require.NoError(t, err)
		n, err = r.Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(7), n)
		assert.Equal(t, int64(1), cmdCalls(t, srv, `script\|load`), "loaded once")
		assert.Equal(t, int64(3), cmdCalls(t, srv, "evalsha"))
		assert.Equal(t, int64(0), cmdCalls(t, srv, "eval"))

		exists, err := c.ScriptExists(ctx, incrByScript.Hash())
		require.NoError(t, err)
		assert.Equal(t, []bool{true}, exists)

		// A script error is the server's *Error.
		_, err = incrByScript.Run(ctx, c, []string{k}, "not a number")
		var se *respire.Error
		require.ErrorAs(t, err, &se)

		// Loaded, the script can run inside a transaction by its digest.
		tx := c.NewTx()
		f := tx.EvalSha(incrByScript.Hash(), []string{k}, "3")
		require.NoError(t, tx.Exec(ctx))
		n, err = f.Val().Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(10), n)
	})
}

// TestScriptRunRO: EVALSHA_RO runs a reading script, loading it on
// NOSCRIPT, and the server refuses a writing one.
func TestScriptRunRO(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := "scriptro:" + t.Name()
		require.NoError(t, c.ScriptFlush(ctx, nil))
		require.NoError(t, c.Set(ctx, k, "stored", nil))

		r, err := readScript.RunRO(ctx, c, []string{k}, "arg")
		require.NoError(t, err)
		elems, err := r.Slice()
		require.NoError(t, err)
		require.Len(t, elems, 2)
		v, err := elems[0].Text()
		require.NoError(t, err)
		assert.Equal(t, "stored", v)
		a, err := elems[1].Text()
		require.NoError(t, err)
		assert.Equal(t, "arg", a)

		// A null result is Nil.
		get := respire.NewScript(`return redis.call("GET", KEYS[1])`)
		_, err = get.RunRO(ctx, c, []string{k + ":missing"})
		assert.ErrorIs(t, err, respire.Nil)

		_, err = incrByScript.RunRO(ctx, c, []string{k + ":n"}, "1")
		var se *respire.Error
		require.ErrorAs(t, err, &se, "a writing script under EVALSHA_RO")
		_, err = c.Get(ctx, k+":n")
		assert.ErrorIs(t, err, respire.Nil)
	})
}

const fnLibrary = `#!lua name=respiretest
redis.register_function('rt_incrby', function(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end)
redis.register_function{
  function_name = 'rt_get',
  callback = function(keys, args) return redis.call('GET', keys[1]) end,
  flags = {'no-writes'},
}
redis.register_function{
  function_name = 'rt_pair',
  callback = function(keys, args) return {args[1], tonumber(args[2]) * 2} end,
  flags = {'no-writes'},
}
`

// TestFunctions: FUNCTION LOAD, FCALL and FCALL_RO through the generated
// methods, with typed results.
func TestFunctions(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := "fn:" + t.Name()

		name, err := c.FunctionLoad(ctx, fnLibrary, &respire.FunctionLoadOptions{Replace: true})
		require.NoError(t, err)
		assert.Equal(t, "respiretest", name)
		_, err = c.FunctionLoad(ctx, fnLibrary, nil)
		var se *respire.Error
		require.ErrorAs(t, err, &se, "loading an existing library without REPLACE")

		r, err := c.FCall(ctx, "rt_incrby", []string{k}, "4")
		require.NoError(t, err)
		n, err := r.Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(4), n)

		r, err = c.FCallRO(ctx, "rt_get", []string{k})
		require.NoError(t, err)
		s, err := r.Text()
		require.NoError(t, err)
		assert.Equal(t, "4", s)

		r, err = c.FCallRO(ctx, "rt_pair", nil, "x", "21")
		require.NoError(t, err)
		elems, err := r.Slice()
		require.NoError(t, err)
		require.Len(t, elems, 2)
		s, err = elems[0].Text()
		require.NoError(t, err)
		assert.Equal(t, "x", s)
		n, err = elems[1].Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(42), n)

		// FCALL_RO of a function without the no-writes flag is refused.
		_, err = c.FCallRO(ctx, "rt_incrby", []string{k}, "1")
		require.ErrorAs(t, err, &se)

		// A null result is Nil, as from Do.
		_, err = c.FCallRO(ctx, "rt_get", []string{k + ":missing"})
		require.ErrorIs(t, err, respire.Nil)

		// In a transaction, with the generated Batch twins.
		tx := c.NewTx()
		f1 := tx.FCall("rt_incrby", []string{k}, "6")
		f2 := tx.FCallRO("rt_get", []string{k})
		require.NoError(t, tx.Exec(ctx))
		n, err = f1.Val().Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(10), n)
		s, err = f2.Val().Text()
		require.NoError(t, err)
		assert.Equal(t, "10", s)

		require.NoError(t, c.FunctionDelete(ctx, "respiretest"))
	})
}
