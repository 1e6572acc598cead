package clients

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// redigoClient is a redigo Pool keeping up to PoolSize idle connections
// (RESP2; redigo has no RESP3). Each operation borrows a connection, as
// redigo's documentation shows.
type redigoClient struct {
	p *redis.Pool
}

func newRedigo(addr string) (*redigoClient, error) {
	p := &redis.Pool{
		MaxIdle:     PoolSize,
		IdleTimeout: 4 * time.Minute,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", addr, redis.DialConnectTimeout(5*time.Second))
		},
	}
	c := p.Get()
	defer c.Close()
	if _, err := c.Do("PING"); err != nil {
		p.Close()
		return nil, err
	}
	return &redigoClient{p: p}, nil
}

func (r *redigoClient) Get(ctx context.Context, key string) (string, error) {
	c := r.p.Get()
	defer c.Close()
	return redis.String(c.Do("GET", key))
}

func (r *redigoClient) Set(ctx context.Context, key, value string) error {
	c := r.p.Get()
	defer c.Close()
	s, err := redis.String(c.Do("SET", key, value))
	if err == nil && s != "OK" {
		err = fmt.Errorf("SET replied %q", s)
	}
	return err
}

func (r *redigoClient) Incr(ctx context.Context, key string) (int64, error) {
	c := r.p.Get()
	defer c.Close()
	return redis.Int64(c.Do("INCR", key))
}

func (r *redigoClient) GetPipe(ctx context.Context, keys, vals []string) error {
	c := r.p.Get()
	defer c.Close()
	for _, k := range keys {
		if err := c.Send("GET", k); err != nil {
			return err
		}
	}
	if err := c.Flush(); err != nil {
		return err
	}
	for i := range keys {
		v, err := redis.String(c.Receive())
		if err != nil {
			return err
		}
		vals[i] = v
	}
	return nil
}

func (r *redigoClient) Close() error { return r.p.Close() }

func (r *redigoClient) MGet(ctx context.Context, keys, vals []string) error {
	c := r.p.Get()
	defer c.Close()
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	vs, err := redis.Values(c.Do("MGET", args...))
	if err != nil {
		return err
	}
	for i, v := range vs {
		b, ok := v.([]byte)
		if !ok {
			return fmt.Errorf("MGET %s: %w", keys[i], ErrMissing)
		}
		vals[i] = string(b)
	}
	return nil
}
