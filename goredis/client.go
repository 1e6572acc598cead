package goredis

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/respire-go/respire/respire"
)

// ErrNotSupported is wrapped by every error the adapter returns for
// something it cannot do through Respire: an argument it cannot encode,
// SCAN on a cluster, a transaction word sent alone. Test for it with
// errors.Is.
var ErrNotSupported = errors.New("goredis: not supported by the Respire adapter")

// Client is a go-redis client whose commands run on a *respire.Client.
//
// It embeds a *redis.Client, so it satisfies redis.UniversalClient,
// redis.Cmdable and redis.Scripter and can be handed to any library that
// takes one of those. The embedded client never connects to a server: a
// hook takes every command go-redis builds and sends it through Respire
// (routing, reconnection, cluster redirects are Respire's), then stores the
// reply in the command as go-redis would have (redis.Nil for a null, an
// error with a RedisError method for an error reply), with go-redis's
// setters or by replaying the reply to go-redis's own reader on one of the
// adapter's connections (see the package documentation).
//
// What the adapter cannot express fails with an error that wraps
// ErrNotSupported, before anything is sent: see the package documentation
// for the list.
//
// Close releases the go-redis side only (the subscriptions of its PubSubs,
// the clients of a cluster's nodes made for ForEachShard and its kin); the
// *respire.Client stays open and remains the caller's to close.
type Client struct {
	*redis.Client

	rc    *respire.Client
	mu    sync.Mutex // serialises AddHook
	chain atomic.Pointer[chain]

	proto   int               // the protocol go-redis is told it speaks
	sharded bool              // a cluster client: SCAN is refused
	next    redis.ProcessHook // go-redis's own processing, for replays
	seq     atomic.Uint64     // names replays
	replays sync.Map          // replay id -> reply bytes
	nodes   nodeClients       // a cluster's nodes' clients (cluster.go)
	node    bool              // a client of one cluster node, made by nodeClients
}

// chain is the users' hooks wrapped around the adapter's own executors.
type chain struct {
	hooks    []redis.Hook
	process  redis.ProcessHook
	pipeline redis.ProcessPipelineHook
	tx       redis.ProcessPipelineHook
}

// ErrNilClient is the error of every command of a Client that New was
// given a nil *respire.Client.
var ErrNilClient = errors.New("goredis: New was given a nil *respire.Client")

// New returns a go-redis client that runs its commands on rc. Creating it
// sends nothing. With a nil rc, every command fails with ErrNilClient.
func New(rc *respire.Client) *Client {
	a := &Client{rc: rc, proto: 3}
	if rc != nil {
		ro := rc.Options()
		if ro.Protocol == 2 {
			a.proto = 2
		}
		a.sharded = ro.Cluster != nil
	}
	a.Client = redis.NewClient(a.shellOptions())
	a.chain.Store(a.build(nil))
	a.Client.AddHook(outer{a: a})
	return a
}

// shellOptions are the options of the embedded go-redis client: its
// connections are the adapter's (vconn), which reach no server.
func (a *Client) shellOptions() *redis.Options {
	return &redis.Options{
		Addr:                     a.addr(),
		Protocol:                 a.proto,
		Dialer:                   a.dial,
		DisableIdentity:          true,
		MaxRetries:               -1, // Respire retries what is safe to retry
		PipelinePoolSize:         -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// addr is the address of the server (a seed's, on a cluster) that the
// Respire client talks to.
func (a *Client) addr() string {
	if a.rc == nil {
		return "respire"
	}
	return a.rc.Addr()
}

// dial gives go-redis one of the adapter's connections.
func (a *Client) dial(context.Context, string, string) (net.Conn, error) {
	if a.rc == nil {
		return nil, ErrNilClient
	}
	return newVconn(a, a.proto), nil
}

// Respire returns the client the adapter runs its commands on.
func (a *Client) Respire() *respire.Client { return a.rc }

// AddHook adds a go-redis hook. Hooks run in the order they were added,
// around the adapter, as they would around go-redis's own network code;
// their DialHook is never called, since the adapter dials nothing.
func (a *Client) AddHook(h redis.Hook) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.chain.Load().hooks
	hooks := append(old[:len(old):len(old)], h)
	a.chain.Store(a.build(hooks))
}

func (a *Client) build(hooks []redis.Hook) *chain {
	return buildChain(hooks, a.process, a.pipeline, a.txPipeline)
}

// buildChain wraps hooks around the given executors, the first hook
// outermost, as go-redis does.
func buildChain(hooks []redis.Hook, process redis.ProcessHook, pipeline, tx redis.ProcessPipelineHook) *chain {
	ch := &chain{hooks: hooks, process: process, pipeline: pipeline, tx: tx}
	for i := len(hooks) - 1; i >= 0; i-- {
		if p := hooks[i].ProcessHook(ch.process); p != nil {
			ch.process = p
		}
		if p := hooks[i].ProcessPipelineHook(ch.pipeline); p != nil {
			ch.pipeline = p
		}
		if p := hooks[i].ProcessPipelineHook(ch.tx); p != nil {
			ch.tx = p
		}
	}
	return ch
}

// outer is the one hook installed on the embedded *redis.Client: it never
// calls go-redis's next step, but for the handshake of the adapter's own
// connections. On the client of a Watch, ws holds the session and its
// chain.
type outer struct {
	a  *Client
	ws *watchSession
}

func (o outer) DialHook(next redis.DialHook) redis.DialHook { return next }

func (o outer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	if o.a.next == nil && o.ws == nil {
		// The first call, from New: go-redis's processing of the embedded
		// client itself, which replays go through.
		o.a.next = next
	}
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isHello(cmd) {
			// go-redis's handshake of one of the adapter's connections: it
			// goes to that connection, which answers it.
			return next(ctx, cmd)
		}
		return o.chain().process(ctx, cmd)
	}
}

func (o outer) chain() *chain {
	if o.ws != nil {
		return o.ws.chain
	}
	return o.a.chain.Load()
}

func isHello(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) == 0 {
		return false
	}
	s, ok := args[0].(string)
	return ok && strings.EqualFold(s, "hello")
}

func (o outer) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	// go-redis gives a MULTI/EXEC pipeline the same hook with its cmds
	// wrapped in MULTI ... EXEC; tell the two apart by that frame.
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ch := o.chain()
		if isTx(cmds) {
			return ch.tx(ctx, cmds)
		}
		return ch.pipeline(ctx, cmds)
	}
}
