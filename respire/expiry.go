package respire

import (
	"context"
	"time"

	"github.com/respire-go/respire/transport/resp"
)

// NoExpiry is what TTL and PTTL return for a key that exists but has no
// time to live. A key that does not exist is the error Nil instead.
// ExpireTime and PExpireTime return the zero time.Time for a key without
// an expiry (check with IsZero) and Nil for a missing key.
const NoExpiry time.Duration = -1

// The servers answer -2 for a missing key and -1 for a key without expiry.
const (
	replyNoKey    = -2
	replyNoExpiry = -1
)

// decExpiry reads a TTL-like integer in units of unit: r.Int is the
// duration, or NoExpiry; a missing key is Nil.
func decExpiry(m resp.Msg, r *result, unit time.Duration) error {
	n, _, err := readInt(m, 0)
	switch {
	case err != nil:
		return err
	case n == replyNoKey:
		return Nil
	case n == replyNoExpiry:
		r.Int = int64(NoExpiry)
	default:
		r.Int = int64(time.Duration(n) * unit)
	}
	return nil
}

func decTTLSeconds(m resp.Msg, r *result) error { return decExpiry(m, r, time.Second) }
func decTTLMillis(m resp.Msg, r *result) error  { return decExpiry(m, r, time.Millisecond) }

// decDeadline reads an EXPIRETIME-like Unix time in units of unit: r.Int
// is Unix nanoseconds, or -1 for a key without expiry (no expiry time is
// a nanosecond before 1970); a missing key is Nil.
func decDeadline(m resp.Msg, r *result, unit time.Duration) error {
	n, _, err := readInt(m, 0)
	switch {
	case err != nil:
		return err
	case n == replyNoKey:
		return Nil
	case n == replyNoExpiry:
		r.Int = replyNoExpiry
	default:
		r.Int = int64(time.Duration(n) * unit)
	}
	return nil
}

func decUnixSeconds(m resp.Msg, r *result) error { return decDeadline(m, r, time.Second) }
func decUnixMillis(m resp.Msg, r *result) error  { return decDeadline(m, r, time.Millisecond) }

func pickDuration(r *result) time.Duration { return time.Duration(r.Int) }

func pickTime(r *result) time.Time { return unixNanos(r.Int) }

func unixNanos(n int64) time.Time {
	if n == replyNoExpiry {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func execDuration(ctx context.Context, c *Client, x *cmd, dec decoder) (time.Duration, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return 0, withCommand(info, err)
	}
	v := pickDuration(&x.res)
	c.release(x)
	return v, nil
}

func execTime(ctx context.Context, c *Client, x *cmd, dec decoder) (time.Time, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return time.Time{}, withCommand(info, err)
	}
	v := pickTime(&x.res)
	c.release(x)
	return v, nil
}

func cachedDuration(ctx context.Context, v Cached, x *cmd, dec decoder, key string) (time.Duration, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	return time.Duration(val.Int), err
}

func cachedTime(ctx context.Context, v Cached, x *cmd, dec decoder, key string) (time.Time, error) {
	val, err := v.cachedRead(ctx, x, dec, key, false)
	if err != nil {
		return time.Time{}, err
	}
	return unixNanos(val.Int), nil
}
