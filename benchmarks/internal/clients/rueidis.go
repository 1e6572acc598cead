package clients

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"
)

// rueidisClient is rueidis with its defaults: automatic pipelining over
// one connection (a lone caller that never overlapped others is served
// synchronously on its own goroutine), RESP3. Client-side caching is
// negotiated by default but only used by DoCache, which nothing here calls.
type rueidisClient struct {
	c rueidis.Client
}

func newRueidis(addr string) (*rueidisClient, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		return nil, err
	}
	return &rueidisClient{c: c}, nil
}

func (r *rueidisClient) Get(ctx context.Context, key string) (string, error) {
	return r.c.Do(ctx, r.c.B().Get().Key(key).Build()).ToString()
}

func (r *rueidisClient) Set(ctx context.Context, key, value string) error {
	return r.c.Do(ctx, r.c.B().Set().Key(key).Value(value).Build()).Error()
}

func (r *rueidisClient) Incr(ctx context.Context, key string) (int64, error) {
	return r.c.Do(ctx, r.c.B().Incr().Key(key).Build()).AsInt64()
}

func (r *rueidisClient) GetPipe(ctx context.Context, keys, vals []string) error {
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = r.c.B().Get().Key(k).Build()
	}
	for i, res := range r.c.DoMulti(ctx, cmds...) {
		v, err := res.ToString()
		if err != nil {
			return err
		}
		vals[i] = v
	}
	return nil
}

func (r *rueidisClient) Close() error { r.c.Close(); return nil }

func (r *rueidisClient) MGet(ctx context.Context, keys, vals []string) error {
	vs, err := r.c.Do(ctx, r.c.B().Mget().Key(keys...).Build()).ToArray()
	if err != nil {
		return err
	}
	for i, v := range vs {
		s, err := v.ToString()
		if err != nil {
			return fmt.Errorf("MGET %s: %w (%w)", keys[i], ErrMissing, err)
		}
		vals[i] = s
	}
	return nil
}
