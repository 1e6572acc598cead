package integration

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMapForms: HSetMap and XAddMap send a map's values as Do sends its
// arguments, XAddMap's fields in the order of their names, on a Client, a
// Batch and a Tx; a bad value or an empty map is refused before anything
// is sent.
func TestMapForms(t *testing.T) {
	eachFlavorProtocol(t, func(t *testing.T, _ harness.Flavor, c *respire.Client, proto int) {
		ctx := ctxT(t)
		p := fmt.Sprintf("maps%d:", proto)
		h, s, h2, s2 := p+"h", p+"s", p+"h2", p+"s2"
		_, err := c.Del(ctx, h, s, h2, s2)
		require.NoError(t, err)
		values := map[string]any{
			"str": "text", "bytes": []byte("raw"), "int": -7, "uint": uint64(1) << 63,
			"float": 2.5, "bool": true, "dur": 1500 * time.Millisecond,
		}
		want := map[string]string{
			"str": "text", "bytes": "raw", "int": "-7", "uint": "9223372036854775808",
			"float": "2.5", "bool": "1", "dur": "1500",
		}
		wantPairs := []respire.FieldValue{
			{Field: "bool", Value: "1"}, {Field: "bytes", Value: "raw"}, {Field: "dur", Value: "1500"},
			{Field: "float", Value: "2.5"}, {Field: "int", Value: "-7"}, {Field: "str", Value: "text"},
			{Field: "uint", Value: "9223372036854775808"},
		}

		n, err := c.HSetMap(ctx, h, values)
		require.NoError(t, err)
		assert.Equal(t, int64(len(values)), n)
		got, err := c.HGetAll(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		n, err = c.HSetMap(ctx, h, map[string]any{"int": 8, "new": false})
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "one field added, one updated")

		id, err := c.XAddMap(ctx, s, "", values, nil)
		require.NoError(t, err)
		entries, err := c.XRange(ctx, s, "-", "+", nil)
		require.NoError(t, err)
		require.Len(t, entries, 1)
		assert.Equal(t, id, entries[0].ID)
		assert.Equal(t, wantPairs, entries[0].Fields)
		id, err = c.XAddMap(ctx, s, "99999999999999-1", map[string]any{"k": 1}, nil)
		require.NoError(t, err)
		assert.Equal(t, "99999999999999-1", id)

		// Refused before anything is sent: nothing reaches the keys.
		for _, bad := range []error{
			func() error { _, err := c.HSetMap(ctx, h2, map[string]any{"ok": 1, "bad": struct{}{}}); return err }(),
			func() error { _, err := c.HSetMap(ctx, h2, nil); return err }(),
			func() error { _, err := c.XAddMap(ctx, s2, "", map[string]any{"bad": []int{1}}, nil); return err }(),
			func() error { _, err := c.XAddMap(ctx, s2, "", map[string]any{}, nil); return err }(),
		} {
			var ae *respire.ArgError
			require.ErrorAs(t, bad, &ae)
			assert.ErrorIs(t, bad, respire.ErrNotSent)
		}
		_, err = c.HSetMap(ctx, h2, map[string]any{"bad": struct{}{}})
		assert.EqualError(t, err, `respire: HSET: argument value of field "bad": unsupported type struct {} (strings, []byte, integers, floats, bool and time.Duration are)`)
		exists, err := c.Exists(ctx, h2, s2)
		require.NoError(t, err)
		assert.Zero(t, exists)

		b := c.NewBatch()
		hn := b.HSetMap(h2, map[string]any{"a": 1, "b": 2})
		sid := b.XAddMap(s2, "1-1", map[string]any{"b": "y", "a": "x"}, nil)
		require.NoError(t, b.Exec(ctx))
		assert.Equal(t, int64(2), hn.Val())
		assert.Equal(t, "1-1", sid.Val())
		tx := c.NewTx()
		hn = tx.HSetMap(h2, map[string]any{"c": 3})
		sid = tx.XAddMap(s2, "1-2", map[string]any{"c": 3.25}, nil)
		require.NoError(t, tx.Exec(ctx))
		assert.Equal(t, int64(1), hn.Val())
		assert.Equal(t, "1-2", sid.Val())
		got, err = c.HGetAll(ctx, h2)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"a": "1", "b": "2", "c": "3"}, got)
		entries, err = c.XRange(ctx, s2, "-", "+", nil)
		require.NoError(t, err)
		require.Len(t, entries, 2)
		assert.Equal(t, []respire.FieldValue{{Field: "a", Value: "x"}, {Field: "b", Value: "y"}}, entries[0].Fields)
		assert.Equal(t, []respire.FieldValue{{Field: "c", Value: "3.25"}}, entries[1].Fields)
	})
}

// TestSetIfGet: SET with a condition and GET returns the old value and
// whether the condition held, for each condition the server has, on a
// Client, a Batch and a Tx.
func TestSetIfGet(t *testing.T) {
	eachFlavorProtocol(t, func(t *testing.T, f harness.Flavor, c *respire.Client, proto int) {
		ctx := ctxT(t)
		k := fmt.Sprintf("setifget%d:k", proto)
		list := fmt.Sprintf("setifget%d:list", proto)
		_, err := c.Del(ctx, k, list)
		require.NoError(t, err)
		value := func() respire.Null[string] {
			v, err := c.Get(ctx, k)
			if errors.Is(err, respire.Nil) {
				return respire.Null[string]{}
			}
			require.NoError(t, err)
			return respire.Null[string]{V: v, Valid: true}
		}
		missing := respire.Null[string]{}
		has := func(v string) respire.Null[string] { return respire.Null[string]{V: v, Valid: true} }
		step := func(value string, cond respire.SetIfCondition, want respire.SetIfGetResult) {
			t.Helper()
			got, err := c.SetIfGet(ctx, k, value, cond, nil)
			require.NoError(t, err, "%+v", cond)
			assert.Equal(t, want, got, "%+v", cond)
		}

		step("v1", respire.SetIfCondition{XX: true}, respire.SetIfGetResult{Old: missing, Set: false})
		assert.Equal(t, missing, value())
		step("v1", respire.SetIfCondition{NX: true}, respire.SetIfGetResult{Old: missing, Set: true})
		step("v2", respire.SetIfCondition{NX: true}, respire.SetIfGetResult{Old: has("v1"), Set: false})
		assert.Equal(t, has("v1"), value())
		step("", respire.SetIfCondition{XX: true}, respire.SetIfGetResult{Old: has("v1"), Set: true})
		step("v3", respire.SetIfCondition{XX: true}, respire.SetIfGetResult{Old: has(""), Set: true})

		// Options travel along: the value is written with its expiry.
		r, err := c.SetIfGet(ctx, k, "v4", respire.SetIfCondition{XX: true}, &respire.SetOptions{KeepTTL: true})
		require.NoError(t, err)
		assert.Equal(t, respire.SetIfGetResult{Old: has("v3"), Set: true}, r)

		hasIfEq := f == harness.Redis86 || f == harness.Valkey81 || f == harness.Valkey91
		_, err = c.SetIfGet(ctx, k, "v5", respire.SetIfCondition{IfEq: "v4"}, nil)
		if !hasIfEq {
			var ue *respire.UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, "IFEQ", ue.Argument)
		} else {
			require.NoError(t, err)
			assert.Equal(t, has("v5"), value())
			step("v6", respire.SetIfCondition{IfEq: "other"}, respire.SetIfGetResult{Old: has("v5"), Set: false})
			assert.Equal(t, has("v5"), value())
		}
		if f == harness.Redis86 {
			step("v6", respire.SetIfCondition{IfNe: "v5"}, respire.SetIfGetResult{Old: has("v5"), Set: false})
			step("v6", respire.SetIfCondition{IfNe: "other"}, respire.SetIfGetResult{Old: has("v5"), Set: true})
			assert.Equal(t, has("v6"), value())
			_, err = c.SetIfGet(ctx, k, "v7", respire.SetIfCondition{IfDEq: "0123456789abcdef"}, nil)
			var ae *respire.ArgError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "condition", ae.Argument)
		}

		// Exactly one condition, checked before anything is sent.
		_, err = c.SetIfGet(ctx, k, "x", respire.SetIfCondition{}, nil)
		assert.ErrorIs(t, err, respire.ErrNotSent)
		_, err = c.SetIfGet(ctx, k, "x", respire.SetIfCondition{NX: true, XX: true}, nil)
		assert.ErrorIs(t, err, respire.ErrNotSent)

		_, err = c.RPush(ctx, list, "x")
		require.NoError(t, err)
		_, err = c.SetIfGet(ctx, list, "x", respire.SetIfCondition{XX: true}, nil)
		requireCmdError(t, err, "SET", "WRONGTYPE")

		_, err = c.Del(ctx, k)
		require.NoError(t, err)
		b := c.NewBatch()
		first := b.SetIfGet(k, "b1", respire.SetIfCondition{NX: true}, nil)
		second := b.SetIfGet(k, "b2", respire.SetIfCondition{XX: true}, nil)
		wrong := b.SetIfGet(list, "b3", respire.SetIfCondition{NX: true}, nil)
		require.NoError(t, b.Exec(ctx))
		assert.Equal(t, respire.SetIfGetResult{Old: missing, Set: true}, first.Val())
		assert.Equal(t, respire.SetIfGetResult{Old: has("b1"), Set: true}, second.Val())
		requireCmdError(t, wrong.Err(), "SET", "WRONGTYPE")
		tx := c.NewTx()
		third := tx.SetIfGet(k, "t1", respire.SetIfCondition{NX: true}, nil)
		require.NoError(t, tx.Exec(ctx))
		assert.Equal(t, respire.SetIfGetResult{Old: has("b2"), Set: false}, third.Val())
	})
}
