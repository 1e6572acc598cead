package respire

import (
	"context"

	"github.com/respire-go/respire/internal/transport/resp"
)

// SetIfGetResult is the outcome of SetIfGet.
type SetIfGetResult struct {
	// Old is the key's value before the command; Old.Valid is false when
	// the key did not exist.
	Old Null[string]
	// Set reports that the condition held, so that value was written.
	Set bool
}

// SetIfGet is SetIf that also returns the key's previous value: SET key
// value with the condition, GET and the options, in one command. Old is
// the value the key had (not Valid when it had none) and Set says whether
// the condition held and the value was written; the server replies with
// the old value only, and Set follows from it:
//
//   - NX: set when the key did not exist;
//   - XX: set when it existed;
//   - IfEq: set when it existed with value IfEq (Redis 8.4 and later,
//     Valkey 8.1 and later);
//   - IfNe: set when it did not exist or held another value (Redis 8.4
//     and later).
//
// IfDEq and IfDNe compare a digest of the old value that the reply does
// not carry, so SetIfGet refuses them with an *ArgError; use SetIf, or
// SetIf then Get in a Tx. A key that holds something other than a string
// gives the server's WRONGTYPE *Error, and nothing is written. Since
// Redis 7.0 for NX with GET.
//
//	r, err := client.SetIfGet(ctx, "leader", "me", respire.SetIfCondition{NX: true}, nil)
//	if err == nil && !r.Set {
//		fmt.Println("the leader is", r.Old.V)
//	}
func (c *Client) SetIfGet(ctx context.Context, key string, value string, condition SetIfCondition, opts *SetOptions) (SetIfGetResult, error) {
	x := c.newCmd(&cmdSET)
	argsSetIfGet(x, key, value, condition, opts)
	info := x.info
	if err := c.exec(ctx, x, decOldValue); err != nil {
		return SetIfGetResult{}, withCommand(info, err)
	}
	r := condition.outcome(&x.res)
	c.release(x)
	return r, nil
}

// SetIfGet queues SET with a condition and GET; see Client.SetIfGet.
func (b *Batch) SetIfGet(key string, value string, condition SetIfCondition, opts *SetOptions) *Future[SetIfGetResult] {
	x := b.newCmd(&cmdSET)
	argsSetIfGet(x, key, value, condition, opts)
	return queue(b, x, decOldValue, condition.outcome)
}

// argsSetIfGet is SetIf's arguments and GET, which SET takes in any place
// after the value.
func argsSetIfGet(x *cmd, key string, value string, condition SetIfCondition, opts *SetOptions) {
	argsSetIf(x, key, value, condition, opts)
	if condition.IfDEq != "" || condition.IfDNe != "" {
		argFail(x, "condition", "SetIfGet cannot tell whether IFDEQ or IFDNE set the value, as the reply has no digest; use SetIf")
	}
	x.arg("GET")
}

// decOldValue reads SET ... GET's reply: the old value, or a null for
// none, in r.Str and r.Bool (true: there was one).
func decOldValue(m resp.Msg, r *result) (err error) {
	if _, null := isNull(m, 0); null {
		r.Bool = false
		return nil
	}
	r.Bool = true
	r.Str, _, err = readStr(m, 0)
	return err
}

// outcome tells from the old value decoded by decOldValue whether the
// condition held.
func (v SetIfCondition) outcome(r *result) SetIfGetResult {
	old := Null[string]{V: r.Str, Valid: r.Bool}
	var set bool
	switch {
	case v.NX:
		set = !old.Valid
	case v.XX:
		set = old.Valid
	case v.IfEq != "":
		set = old.Valid && old.V == v.IfEq
	case v.IfNe != "":
		set = !old.Valid || old.V != v.IfNe
	}
	return SetIfGetResult{Old: old, Set: set}
}
