package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/respire-go/respire/respire"
)

// ErrInvalidOption is wrapped by the errors of New and of the Limiter's
// methods given a bad Limit or cost.
var ErrInvalidOption = errors.New("ratelimit: invalid option")

// Limit is Rate requests per Period, with bursts of up to Burst requests.
type Limit struct {
	// Rate is the number of requests per Period, at least 1.
	Rate int
	// Period is the time Rate requests take, at least a microsecond times
	// Rate.
	Period time.Duration
	// Burst is the number of requests allowed at once, at least 1.
	Burst int
}

// PerSecond returns a Limit of rate requests a second, with bursts of burst.
func PerSecond(rate, burst int) Limit {
	return Limit{Rate: rate, Period: time.Second, Burst: burst}
}

// PerMinute returns a Limit of rate requests a minute, with bursts of burst.
func PerMinute(rate, burst int) Limit {
	return Limit{Rate: rate, Period: time.Minute, Burst: burst}
}

// Interval is the emission interval: Period/Rate, rounded down to a
// microsecond.
func (l Limit) Interval() time.Duration {
	if l.Rate <= 0 {
		return 0
	}
	return (l.Period / time.Duration(l.Rate)).Truncate(time.Microsecond)
}

func (l Limit) validate() error {
	switch {
	case l.Rate < 1:
		return fmt.Errorf("%w: Rate %d is under 1", ErrInvalidOption, l.Rate)
	case l.Burst < 1:
		return fmt.Errorf("%w: Burst %d is under 1", ErrInvalidOption, l.Burst)
	case l.Interval() < time.Microsecond:
		return fmt.Errorf("%w: Period %v / Rate %d is under a microsecond", ErrInvalidOption, l.Period, l.Rate)
	}
	return nil
}

// Result is one decision.
type Result struct {
	// Allowed tells whether the request may go ahead.
	Allowed bool
	// Remaining is the number of requests of cost 1 that would be allowed
	// right after this decision.
	Remaining int
	// RetryAfter, for a request refused, is how long until the same
	// request would be allowed; 0 when allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until the limit is back to a full burst.
	ResetAfter time.Duration
}

// Options configure a Limiter. The zero value is usable.
type Options struct {
	// Prefix starts every key; "" means "rate:".
	Prefix string
	// Now, when set, is the clock of decisions instead of the server's
	// TIME. All the Limiters sharing keys must then share a clock.
	Now func() time.Time
}

// Limiter takes rate-limit decisions on one client. It is safe for
// concurrent use.
type Limiter struct {
	c *respire.Client
	o Options
}

// New returns a Limiter over c, or an error wrapping ErrInvalidOption.
func New(c *respire.Client, o Options) (*Limiter, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOption)
	}
	if o.Prefix == "" {
		o.Prefix = "rate:"
	}
	return &Limiter{c: c, o: o}, nil
}

// Key returns the Redis key of the limit called key.
func (l *Limiter) Key(key string) string { return l.o.Prefix + key }

// Allow decides on one request under limit for key.
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	return l.AllowN(ctx, key, limit, 1)
}

// AllowN decides on a request of cost n (n requests at once) under limit
// for key; n = 0 reports the state without consuming anything. A cost
// above limit.Burst can never be allowed and is an error.
func (l *Limiter) AllowN(ctx context.Context, key string, limit Limit, n int) (Result, error) {
	if err := limit.validate(); err != nil {
		return Result{}, err
	}
	if n < 0 || n > limit.Burst {
		return Result{}, fmt.Errorf("%w: cost %d outside 0..Burst (%d)", ErrInvalidOption, n, limit.Burst)
	}
	now := ""
	if l.o.Now != nil {
		now = fmt.Sprint(l.o.Now().UnixMicro())
	}
	iv := limit.Interval().Microseconds()
	r, err := gcra.Run(ctx, l.c, []string{l.Key(key)}, limit.Burst, iv, n, now)
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: %q: %w", key, err)
	}
	v, err := r.Slice()
	if err == nil && len(v) != 4 {
		err = fmt.Errorf("reply of %d elements, want 4", len(v))
	}
	var f [4]int64
	for i := 0; err == nil && i < 4; i++ {
		f[i], err = v[i].Int64()
	}
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: %q: %w", key, err)
	}
	return Result{
		Allowed:    f[0] == 1,
		Remaining:  int(f[1]),
		RetryAfter: time.Duration(f[2]) * time.Microsecond,
		ResetAfter: time.Duration(f[3]) * time.Microsecond,
	}, nil
}

// gcra takes one decision. KEYS[1]: the TAT, in microseconds. ARGV: burst,
// interval (µs), cost, now (µs, or "" for the server's TIME). Reply:
// {allowed, remaining, retry after (µs), reset after (µs)}.
var gcra = respire.NewScript(`
local burst = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now
if ARGV[4] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[4])
end
local tolerance = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local new_tat = tat + interval * cost
local early = new_tat - tolerance - now
if early > 0 then
  local remaining = math.floor((now + tolerance - tat) / interval)
  if remaining < 0 then
    remaining = 0
  end
  return {0, remaining, early, tat - now}
end
if cost > 0 then
  redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
end
return {1, math.floor(-early / interval), 0, new_tat - now}
`)
