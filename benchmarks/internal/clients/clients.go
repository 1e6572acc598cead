// Package clients puts Respire and its peers (go-redis, rueidis, redigo)
// behind one small interface, each configured the way a typical user would
// configure it for a server shared by up to 64 goroutines. The benchmarks
// and the load tool measure them only through this interface, so every
// client pays the same (one interface call per operation) overhead.
package clients

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/respire-go/respire/respire"
)

// Client is what a benchmark does with a client.
type Client interface {
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string) error
	Incr(ctx context.Context, key string) (int64, error)
	// GetPipe sends one GET per key as one pipeline and stores the values
	// in vals (len(vals) == len(keys)).
	GetPipe(ctx context.Context, keys, vals []string) error
	// MGet reads every key with one MGET and stores the values in vals;
	// a missing key is an error.
	MGet(ctx context.Context, keys, vals []string) error
	Close() error
}

// Checker is implemented by clients that check a GET's value in place,
// without making a string of it (Respire's Lease forms, client
// "respire-lease"). Benchmarks and the load tool use it when present: it
// is how a hot path that consumes values at once would read them.
type Checker interface {
	// GetCheck reads key and returns an error unless its value is want.
	GetCheck(ctx context.Context, key, want string) error
	// GetPipeCheck reads every key in one pipeline and returns an error
	// unless ok(i, value of keys[i]) holds for each.
	GetPipeCheck(ctx context.Context, keys []string, ok func(i int, v []byte) bool) error
}

// IO counts what a client did on its sockets (Respire reports it).
type IO struct {
	// ParseReads and ParseBytes: the parser's reads (one parse pass each)
	// and their bytes. With the filler they come from its queue.
	ParseReads, ParseBytes int64
	// SocketReads and SocketBytes: read system calls that returned data.
	SocketReads, SocketBytes int64
	// Commands sent, and the write system calls that carried them.
	Commands, Writes int64
}

// IOStatser is implemented by clients that count their socket I/O.
type IOStatser interface {
	IOStats() IO
}

// Per returns a/b, or 0 when b is not positive.
func Per(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// PoolSize is the connection pool size given to pooled peers (go-redis,
// redigo): enough for the 64 goroutines of the conc64 shapes.
const PoolSize = 64

// Names lists the clients, in the order benchmarks run them.
var Names = []string{"respire-nofiller", "respire-filler", "respire-lease", "goredis", "rueidis", "redigo"}

// Extra lists clients that New knows but the benchmarks do not run unless
// asked: "respire-direct" is the defaults with ReadMode: ReadModeDirect
// (a lone caller reads its own reply without polling the socket first).
var Extra = []string{"respire-direct"}

// New connects client name to addr.
func New(ctx context.Context, name, addr string) (Client, error) {
	switch name {
	case "respire-nofiller":
		return newRespire(ctx, addr, respire.ReadModeDefault)
	case "respire-filler":
		return newRespire(ctx, addr, respire.ReadModeFiller)
	case "respire-direct":
		return newRespire(ctx, addr, respire.ReadModeDirect)
	case "respire-lease":
		r, err := newRespire(ctx, addr, respire.ReadModeDefault)
		if err != nil {
			return nil, err
		}
		return &respireLease{respireClient: r}, nil
	case "goredis":
		return newGoRedis(ctx, addr)
	case "rueidis":
		return newRueidis(addr)
	case "redigo":
		return newRedigo(addr)
	}
	return nil, fmt.Errorf("unknown client %q (known: %s)", name, strings.Join(append(Names[:len(Names):len(Names)], Extra...), ", "))
}

// ErrMissing is MGet's error for a key that holds no value.
var ErrMissing = errors.New("key holds no value")
