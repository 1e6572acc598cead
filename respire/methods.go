package respire

// Helpers that the generated methods (zz_commands.go) call, so that each
// method stays a few lines: running a command and picking its typed result,
// and encoding arguments whose Go type needs checking or converting.

import (
	"context"
	"errors"
	"math"
	"time"
)

// withCommand names the command in a decoding error, or in an error reply
// nested in its reply, which the readers cannot know.
func withCommand(info *cmdInfo, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok && e.Command == "" {
		c := *e
		c.Command = info.name
		return &c
	}
	var u *UnexpectedReplyError
	if errors.As(err, &u) && u.Command == "" {
		c := *u
		c.Command = info.name
		return &c
	}
	return err
}

func execOK(ctx context.Context, c *Client, x *cmd, dec decoder) error {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return withCommand(info, err)
	}
	c.release(x)
	return nil
}

func execStr(ctx context.Context, c *Client, x *cmd, dec decoder) (string, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return "", withCommand(info, err)
	}
	v := x.res.Str
	c.release(x)
	return v, nil
}

func execInt(ctx context.Context, c *Client, x *cmd, dec decoder) (int64, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return 0, withCommand(info, err)
	}
	v := x.res.Int
	c.release(x)
	return v, nil
}

func execFloat(ctx context.Context, c *Client, x *cmd, dec decoder) (float64, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return 0, withCommand(info, err)
	}
	v := x.res.Float
	c.release(x)
	return v, nil
}

func execBool(ctx context.Context, c *Client, x *cmd, dec decoder) (bool, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return false, withCommand(info, err)
	}
	v := x.res.Bool
	c.release(x)
	return v, nil
}

func execAny[T any](ctx context.Context, c *Client, x *cmd, dec decoder) (T, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		var zero T
		return zero, withCommand(info, err)
	}
	v, _ := x.res.Any.(T)
	c.release(x)
	return v, nil
}

// Result pickers for futures.

func pickNone(*result) struct{} { return struct{}{} }
func pickStr(r *result) string  { return r.Str }

// pickLease takes the Lease out of r, so that recycling the command does
// not release it.
func pickLease(r *result) *Lease {
	l, _ := r.Any.(*Lease)
	r.Any = nil
	return l
}
func pickInt(r *result) int64     { return r.Int }
func pickFloat(r *result) float64 { return r.Float }
func pickBool(r *result) bool     { return r.Bool }
func pickAny[T any](r *result) T {
	v, _ := r.Any.(T)
	return v
}

// Argument encoders. Each records an *ArgError naming the command and the
// argument instead of sending a value the server would misread.

func argFail(x *cmd, arg, msg string) { x.fail(newArgError(x.info.name, arg, msg)) }

// argDouble rejects NaN, which no command accepts; infinities are sent as
// inf and -inf.
func argDouble(x *cmd, arg string, f float64) {
	if math.IsNaN(f) {
		argFail(x, arg, "NaN is not a valid number")
	}
	x.argFloat(f)
}

// Durations.
//
// A time.Duration is never refused for its precision: it is sent in the
// unit the command takes, rounded away from zero, so that a non-zero
// duration never becomes 0 (which means "no expiry" or "block without a
// limit" to many commands) and a TTL computed with time.Until works. Where
// a command takes the same value in seconds or in milliseconds (SET's EX
// and PX), a duration that is not whole seconds is sent in milliseconds.
// Negative durations are sent as they are (rounded the same way): the
// server refuses them, or, for EXPIRE and its kin, deletes the key at once.
// Blocking timeouts refuse them before anything is sent.

// inUnits returns d in units of u, rounded away from zero.
func inUnits(d, u time.Duration) int64 {
	n := int64(d / u)
	switch r := d % u; {
	case r > 0:
		n++
	case r < 0:
		n--
	}
	return n
}

// argSeconds sends d in seconds, rounded up.
func argSeconds(x *cmd, d time.Duration) { x.argInt(inUnits(d, time.Second)) }

// argSecondsOrTwin sends d in seconds when it is whole seconds, else in
// milliseconds, rounded up, turning x into twin, the command that takes
// them (EXPIRE 2500ms is sent as PEXPIRE 2500, not rounded up to 3s).
func argSecondsOrTwin(x *cmd, d time.Duration, twin *cmdInfo) {
	if d%time.Second == 0 {
		x.argInt(int64(d / time.Second))
		return
	}
	x.renameTo(twin)
	x.argInt(inUnits(d, time.Millisecond))
}

// argMillis sends d in milliseconds, rounded up.
func argMillis(x *cmd, d time.Duration) { x.argInt(inUnits(d, time.Millisecond)) }

// argSecondsOrMillis sends the token sec and d in seconds when d is whole
// seconds, else the token ms and d in milliseconds, rounded up: SET's EX
// 1500ms is sent as PX 1500.
func argSecondsOrMillis(x *cmd, d time.Duration, sec, ms string) {
	if d%time.Second == 0 {
		x.arg(sec)
		x.argInt(int64(d / time.Second))
		return
	}
	x.arg(ms)
	x.argInt(inUnits(d, time.Millisecond))
}

// argSecondsFloat sends d as fractional seconds, as blocking commands take
// their timeout, rounded up to the millisecond the servers count in: a
// positive timeout below 1ms would otherwise block without a limit.
func argSecondsFloat(x *cmd, arg string, d time.Duration) {
	if d < 0 {
		argFail(x, arg, "negative timeout "+d.String())
	}
	x.argFloat(float64(inUnits(d, time.Millisecond)) / 1000)
}

// argUnixSeconds sends t as a Unix time in seconds (truncated).
func argUnixSeconds(x *cmd, arg string, t time.Time) {
	if t.Unix() < 0 {
		argFail(x, arg, "time "+t.String()+" is before 1970")
	}
	x.argInt(t.Unix())
}

// argUnixMillis sends t as a Unix time in milliseconds (truncated).
func argUnixMillis(x *cmd, arg string, t time.Time) {
	if t.UnixMilli() < 0 {
		argFail(x, arg, "time "+t.String()+" is before 1970")
	}
	x.argInt(t.UnixMilli())
}

// argEnum sends a required choice of tokens.
func argEnum(x *cmd, arg, v string) {
	if v == "" {
		argFail(x, arg, "a value is required")
	}
	x.arg(v)
}

// argBoolToken sends the first token for true and the second for false
// (YES/NO, ON/OFF).
func argBoolToken(x *cmd, v bool, yes, no string) {
	if v {
		x.arg(yes)
	} else {
		x.arg(no)
	}
}

// needOne checks a required repeated argument.
func needOne(x *cmd, arg string, n int) {
	if n == 0 {
		argFail(x, arg, "at least one value is required")
	}
}

// oneOf checks the branches of a choice: set reports, in order, which of
// the branches named in names ("EX, PX, EXAT") are set. At most one may
// be, and exactly one when required.
func oneOf(x *cmd, arg string, required bool, names string, set ...bool) {
	n := 0
	for _, s := range set {
		if s {
			n++
		}
	}
	switch {
	case n > 1:
		argFail(x, arg, "only one of "+names+" may be set")
	case n == 0 && required:
		argFail(x, arg, "one of "+names+" must be set")
	}
}

// argTokens sends a token of several words (REPLICAOF's NO ONE).
func argTokens(x *cmd, words ...string) {
	for _, w := range words {
		x.arg(w)
	}
}
