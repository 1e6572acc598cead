package respire

import (
	"context"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
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

//lint:ignore U1000 the generator emits it for a cacheable read with a duration reply (gen/emit.go); no current command has one
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

// Inside an array (HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME: one value per
// field asked for) -2 is a field that does not exist, a value that is not
// Valid; -1 a field without expiry, NoExpiry or the zero time.

func readTTLSeconds(m resp.Msg, i int) (Null[time.Duration], int, error) {
	return readExpiryElem(m, i, time.Second, func(n int64) time.Duration { return time.Duration(n) })
}

func readTTLMillis(m resp.Msg, i int) (Null[time.Duration], int, error) {
	return readExpiryElem(m, i, time.Millisecond, func(n int64) time.Duration { return time.Duration(n) })
}

func readDeadlineSeconds(m resp.Msg, i int) (Null[time.Time], int, error) {
	return readExpiryElem(m, i, time.Second, unixNanos)
}

func readDeadlineMillis(m resp.Msg, i int) (Null[time.Time], int, error) {
	return readExpiryElem(m, i, time.Millisecond, unixNanos)
}

// readExpiryElem reads one TTL-like element in units of unit and makes
// its value with conv from nanoseconds (or -1 for no expiry).
func readExpiryElem[T any](m resp.Msg, i int, unit time.Duration, conv func(int64) T) (Null[T], int, error) {
	n, next, err := readInt(m, i)
	switch {
	case err != nil:
		return Null[T]{}, next, err
	case n == replyNoKey:
		return Null[T]{}, next, nil
	case n == replyNoExpiry:
		return Null[T]{V: conv(replyNoExpiry), Valid: true}, next, nil
	}
	return Null[T]{V: conv(int64(time.Duration(n) * unit)), Valid: true}, next, nil
}
