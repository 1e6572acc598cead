package clients

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/respire"
)

// ClusterNames lists the clients NewCluster knows: redigo has no cluster
// client.
var ClusterNames = []string{"respire-nofiller", "goredis", "rueidis"}

// NewCluster connects client name to the cluster whose nodes are seeds,
// configured as New configures it for one server: Respire with its
// defaults and ClusterOptions, go-redis's ClusterClient with PoolSize
// connections per node, rueidis with its defaults (it finds the cluster
// itself).
func NewCluster(ctx context.Context, name string, seeds []string) (Client, error) {
	switch name {
	case "respire-nofiller":
		c, err := respire.Connect(ctx, respire.Options{Cluster: &respire.ClusterOptions{Addrs: seeds}})
		if err != nil {
			return nil, err
		}
		return &respireClient{c: c}, nil
	case "goredis":
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds, PoolSize: PoolSize})
		if err := c.ForEachShard(ctx, func(ctx context.Context, s *redis.Client) error { return s.Ping(ctx).Err() }); err != nil {
			c.Close()
			return nil, err
		}
		return &goRedisCluster{c: c}, nil
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: seeds})
		if err != nil {
			return nil, err
		}
		return &rueidisClient{c: c}, nil
	}
	return nil, fmt.Errorf("no cluster client %q (known: %s)", name, strings.Join(ClusterNames, ", "))
}

// goRedisCluster is go-redis's ClusterClient behind Client.
type goRedisCluster struct {
	c *redis.ClusterClient
}

func (g *goRedisCluster) Get(ctx context.Context, key string) (string, error) {
	return g.c.Get(ctx, key).Result()
}

func (g *goRedisCluster) Set(ctx context.Context, key, value string) error {
	return g.c.Set(ctx, key, value, 0).Err()
}

func (g *goRedisCluster) Incr(ctx context.Context, key string) (int64, error) {
	return g.c.Incr(ctx, key).Result()
}

func (g *goRedisCluster) GetPipe(ctx context.Context, keys, vals []string) error {
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

func (g *goRedisCluster) MGet(ctx context.Context, keys, vals []string) error {
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

func (g *goRedisCluster) Close() error { return g.c.Close() }
