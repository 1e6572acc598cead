package clients

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// goRedis is go-redis v9 with its defaults (RESP3) and a pool of PoolSize
// connections (its default is 10 per GOMAXPROCS, 20 on two cores, which
// would make 44 of the 64 goroutines queue for a connection).
type goRedis struct {
	c *redis.Client
}

func newGoRedis(ctx context.Context, addr string) (*goRedis, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: PoolSize})
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return &goRedis{c: c}, nil
}

func (g *goRedis) Get(ctx context.Context, key string) (string, error) {
	return g.c.Get(ctx, key).Result()
}

func (g *goRedis) Set(ctx context.Context, key, value string) error {
	return g.c.Set(ctx, key, value, 0).Err()
}

func (g *goRedis) Incr(ctx context.Context, key string) (int64, error) {
	return g.c.Incr(ctx, key).Result()
}

func (g *goRedis) GetPipe(ctx context.Context, keys, vals []string) error {
	p := g.c.Pipeline()
	cmds := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = p.Get(ctx, k)
	}
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	for i, c := range cmds {
		vals[i] = c.Val()
	}
	return nil
}

func (g *goRedis) Close() error { return g.c.Close() }

func (g *goRedis) MGet(ctx context.Context, keys, vals []string) error {
	vs, err := g.c.MGet(ctx, keys...).Result()
	if err != nil {
		return err
	}
	for i, v := range vs {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("MGET %s: %w", keys[i], ErrMissing)
		}
		vals[i] = s
	}
	return nil
}
