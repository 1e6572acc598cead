package goredis

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// supported reports, before anything is sent, whether the adapter runs
// cmd: not SCAN on a cluster (it would answer for one node), nor WATCH and
// the transaction words outside the Watch and TxPipeline that frame them.
func (a *Client) supported(cmd redis.Cmder) error {
	if a.sharded && strings.EqualFold(cmd.Name(), "scan") {
		// Respire would send it to one node: a silent part of the keys.
		return fmt.Errorf("%w: SCAN on a cluster would cover one primary's keys only; "+
			"use ForEachMaster with a SCAN on each primary, the *respire.Client's ScanAll, which covers every primary, or KEYS, which is sent to all of them",
			ErrNotSupported)
	}
	switch strings.ToLower(cmd.Name()) {
	case "watch", "unwatch", "multi", "exec", "discard":
		// Sent alone, on a shared connection, they would leave it in a
		// state other callers share.
		return fmt.Errorf("%w: %s alone would change a shared connection: use Watch, TxPipelined or Conn",
			ErrNotSupported, strings.ToUpper(cmd.Name()))
	}
	return nil
}

// store puts the outcome of a command (reply r or error err, as Respire's
// Do returns them) into cmd as go-redis would have, and returns cmd.Err().
func store(cmd redis.Cmder, r respire.Reply, err error) error {
	null := errors.Is(err, respire.Nil)
	if err != nil && !null {
		cmd.SetErr(mapErr(err))
		return cmd.Err()
	}
	if null {
		if c, ok := cmd.(*redis.BoolCmd); ok {
			// SET ... NX answers a null when it sets nothing: false, as
			// go-redis reads it.
			c.SetVal(false)
			return nil
		}
		cmd.SetErr(redis.Nil)
		return redis.Nil
	}
	if err := fill(cmd, r); err != nil {
		cmd.SetErr(err)
	}
	return cmd.Err()
}

// fill stores a non-null reply.
func fill(cmd redis.Cmder, r respire.Reply) error {
	switch c := cmd.(type) {
	case *redis.Cmd:
		c.SetVal(value(r))
	case *redis.StatusCmd:
		return set(c.SetVal, r.Text)
	case *redis.StringCmd:
		return set(c.SetVal, r.Text)
	case *redis.IntCmd:
		return set(c.SetVal, r.Int64)
	case *redis.FloatCmd:
		return set(c.SetVal, r.Float64)
	case *redis.UintCmd:
		n, err := r.Int64()
		if err != nil {
			return err
		}
		c.SetVal(uint64(n))
	case *redis.BoolCmd:
		b, err := boolOf(r)
		if err != nil {
			return err
		}
		c.SetVal(b)
	case *redis.DurationCmd:
		n, err := r.Int64()
		if err != nil {
			return err
		}
		c.SetVal(duration(c.Name(), n))
	case *redis.TimeCmd:
		return fillTime(c, r)
	case *redis.SliceCmd:
		return fillSlice(r, c.SetVal, func(e respire.Reply) (any, error) { return value(e), nil })
	case *redis.BoolSliceCmd:
		return fillSlice(r, c.SetVal, boolOf)
	case *redis.StringSliceCmd:
		return fillSlice(r, c.SetVal, func(e respire.Reply) (string, error) {
			if e.IsNull() {
				return "", nil
			}
			return e.Text()
		})
	case *redis.IntSliceCmd:
		return fillSlice(r, c.SetVal, func(e respire.Reply) (int64, error) {
			if e.IsNull() {
				return 0, nil
			}
			return e.Int64()
		})
	case *redis.FloatSliceCmd:
		return fillSlice(r, c.SetVal, func(e respire.Reply) (float64, error) {
			if e.IsNull() {
				return 0, nil
			}
			return e.Float64()
		})
	case *redis.MapStringStringCmd:
		return fillMap(r, c.SetVal, respire.Reply.Text)
	case *redis.MapStringIntCmd:
		return fillMap(r, c.SetVal, respire.Reply.Int64)
	case *redis.ScanCmd:
		return fillScan(c, r)
	case *redis.ZSliceCmd:
		return fillZ(c, r)
	case *redis.XMessageSliceCmd:
		return fillSlice(r, c.SetVal, xMessage)
	default:
		return fmt.Errorf("goredis: %T is replayed, not filled", cmd)
	}
	return nil
}

func set[T any](setVal func(T), get func() (T, error)) error {
	v, err := get()
	if err != nil {
		return err
	}
	setVal(v)
	return nil
}

func fillSlice[T any](r respire.Reply, setVal func([]T), conv func(respire.Reply) (T, error)) error {
	elems, err := r.Slice()
	if err != nil {
		return err
	}
	out := make([]T, len(elems))
	for i, e := range elems {
		if out[i], err = conv(e); err != nil {
			return err
		}
	}
	setVal(out)
	return nil
}

func fillMap[T any](r respire.Reply, setVal func(map[string]T), conv func(respire.Reply) (T, error)) error {
	m, err := r.Map()
	if err != nil {
		return err
	}
	out := make(map[string]T, len(m))
	for k, e := range m {
		if out[k], err = conv(e); err != nil {
			return err
		}
	}
	setVal(out)
	return nil
}

// boolOf reads a reply as go-redis's BoolCmd does: an integer is true when
// 1, a status when OK, a RESP3 boolean as it is.
func boolOf(r respire.Reply) (bool, error) {
	switch v := r.Any().(type) {
	case bool:
		return v, nil
	case int64:
		return v == 1, nil
	case string:
		return v == "OK", nil
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("goredis: reply %v is not a boolean", r)
}

// duration converts the integer reply of a DurationCmd. go-redis keeps the
// unit in an unexported field, so it is taken from the command's name: the
// P-commands count milliseconds, the others seconds; negative replies
// (-1 no expiry, -2 no key) stay as they are, as go-redis leaves them.
func duration(name string, n int64) time.Duration {
	if n < 0 {
		return time.Duration(n)
	}
	switch strings.ToLower(name) {
	case "pttl", "pexpiretime":
		return time.Duration(n) * time.Millisecond
	}
	return time.Duration(n) * time.Second
}

func fillTime(c *redis.TimeCmd, r respire.Reply) error {
	elems, err := r.Slice()
	if err != nil {
		return err
	}
	if len(elems) != 2 {
		return fmt.Errorf("goredis: TIME replied %d values, not 2", len(elems))
	}
	sec, err := elems[0].Int64()
	if err != nil {
		return err
	}
	usec, err := elems[1].Int64()
	if err != nil {
		return err
	}
	c.SetVal(time.Unix(sec, usec*int64(time.Microsecond)))
	return nil
}

func fillScan(c *redis.ScanCmd, r respire.Reply) error {
	elems, err := r.Slice()
	if err != nil {
		return err
	}
	if len(elems) != 2 {
		return fmt.Errorf("goredis: %s replied %d values, not 2", c.Name(), len(elems))
	}
	text, err := elems[0].Text()
	if err != nil {
		return err
	}
	cursor, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("goredis: %s cursor %q: %w", c.Name(), text, err)
	}
	keys, err := elems[1].Slice()
	if err != nil {
		return err
	}
	page := make([]string, len(keys))
	for i, k := range keys {
		if page[i], err = k.Text(); err != nil {
			return err
		}
	}
	c.SetVal(page, cursor)
	return nil
}

// fillZ reads member-score pairs: nested pairs on RESP3, a flat list on
// RESP2.
func fillZ(c *redis.ZSliceCmd, r respire.Reply) error {
	elems, err := r.Slice()
	if err != nil {
		return err
	}
	var pairs [][2]respire.Reply
	for i := 0; i < len(elems); i++ {
		if p, err := elems[i].Slice(); err == nil {
			if len(p) != 2 {
				return fmt.Errorf("goredis: %s: a pair of %d values", c.Name(), len(p))
			}
			pairs = append(pairs, [2]respire.Reply{p[0], p[1]})
			continue
		}
		if i+1 >= len(elems) {
			return fmt.Errorf("goredis: %s: odd number of values", c.Name())
		}
		pairs = append(pairs, [2]respire.Reply{elems[i], elems[i+1]})
		i++
	}
	out := make([]redis.Z, len(pairs))
	for i, p := range pairs {
		m, err := p[0].Text()
		if err != nil {
			return err
		}
		s, err := p[1].Float64()
		if err != nil {
			return err
		}
		out[i] = redis.Z{Member: m, Score: s}
	}
	c.SetVal(out)
	return nil
}

// value is a reply as go-redis's generic Cmd holds it.
func value(r respire.Reply) any {
	if r.Type() == respire.ReplyBigNumber {
		digits, _ := r.Text()
		if n, ok := new(big.Int).SetString(digits, 10); ok {
			return n
		}
	}
	if el, err := r.Slice(); err == nil && r.Type() != respire.ReplyMap {
		out := make([]any, len(el))
		for i, e := range el {
			out[i] = value(e)
		}
		return out
	}
	return plain(r.Any())
}

// plain converts what respire.Reply.Any returns to go-redis's forms: maps
// keyed by interface{}, nested error replies as go-redis's own error
// values, nulls nil.
func plain(v any) any {
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			v[i] = plain(e)
		}
		return v
	case map[string]any:
		out := make(map[any]any, len(v))
		for k, e := range v {
			out[k] = plain(e)
		}
		return out
	case error:
		// An error nested in an aggregate: go-redis keeps its own value.
		return protoError(errMessage(v))
	}
	return v
}

// xMessage reads one stream entry (XRANGE, XREVRANGE, XCLAIM) as go-redis
// does: its ID and fields, a null for the fields of a deleted entry (no
// Values), and after them, when XREADGROUP's CLAIM added them, the
// milliseconds since the last delivery and the delivery count.
func xMessage(e respire.Reply) (redis.XMessage, error) {
	parts, err := e.Slice()
	if err != nil {
		return redis.XMessage{}, err
	}
	if len(parts) != 2 && len(parts) != 4 {
		return redis.XMessage{}, fmt.Errorf("goredis: a stream entry of %d elements, want 2 or 4", len(parts))
	}
	var msg redis.XMessage
	if msg.ID, err = parts[0].Text(); err != nil {
		return redis.XMessage{}, err
	}
	if !parts[1].IsNull() {
		kv, err := parts[1].Slice()
		if err != nil {
			return redis.XMessage{}, err
		}
		msg.Values = make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			k, err := kv[i].Text()
			if err != nil {
				return redis.XMessage{}, err
			}
			v, err := kv[i+1].Text()
			if err != nil {
				return redis.XMessage{}, err
			}
			msg.Values[k] = v
		}
	}
	if len(parts) == 4 {
		if msg.MillisElapsedFromDelivery, err = parts[2].Int64(); err != nil {
			return redis.XMessage{}, err
		}
		if msg.DeliveredCount, err = parts[3].Int64(); err != nil {
			return redis.XMessage{}, err
		}
	}
	return msg, nil
}
