package goredis

import (
	"context"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// Conn: go-redis's Conn runs its commands on one connection, which may
// carry state (SELECT, CLIENT SETNAME, CLIENT TRACKING...). The adapter
// gives it a connection of its own: Respire's WithConn, held for the
// life of the Conn, behind one of the adapter's connections (a dedicated
// vconn). go-redis writes each command to it as to a server; a goroutine
// of the adapter sends the commands on the Respire connection one after
// the other and writes each reply back as the server sent it, for
// go-redis's own readers. Close ends the goroutine and closes the
// connection (it is never reused: its state is the Conn's).
//
// Commands of a Conn take go-redis's deadlines (the context's, or its
// ReadTimeout), not its context's cancellation: when go-redis gives up on
// a reply it closes the connection, which ends the command.

// Conn returns a go-redis Conn whose commands run, in order, on a
// connection of its own (Respire's WithConn), until Close. Hooks added
// before the call run around its commands. The connection counts against
// Respire's Options.BlockingPoolSize while the Conn is open: close it.
func (a *Client) Conn() *redis.Conn {
	opts := a.shellOptions()
	opts.Dialer = a.dialDedicated
	opts.PoolSize = 1
	opts.DialerRetries = 1 // Respire's dial reports why it failed; go-redis need not insist
	shell := redis.NewClient(opts)
	shell.AddHook(dedicated{hooks: a.chain.Load().hooks})
	return shell.EphemeralConn()
}

// dedicated is the hook of a Conn's client: the users' hooks around
// go-redis's own processing, which writes to the dedicated connection.
type dedicated struct{ hooks []redis.Hook }

func (d dedicated) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d dedicated) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return buildChain(d.hooks, next, nil, nil).process
}

func (d dedicated) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return buildChain(d.hooks, nil, next, nil).pipeline
}

// dialDedicated gives a Conn its connection: a vconn whose commands run on
// a Respire connection of their own. It never fails: the Respire
// connection is dialled meanwhile, and a command written when it could not
// be fails with the reason (go-redis then drops this connection and dials
// again for the next command), rather than have go-redis's pool retry the
// dial in the background.
func (a *Client) dialDedicated(context.Context, string, string) (net.Conn, error) {
	if a.rc == nil {
		return nil, ErrNilClient
	}
	c := newVconn(a, a.proto)
	sctx, cancel := context.WithCancel(context.Background())
	d := &held{c: c, cmds: make(chan []string, 64), cancel: cancel,
		ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.err = a.rc.WithConn(sctx, func(conn *respire.Conn) error {
			close(d.ready)
			d.serve(sctx, conn)
			return nil
		})
		if d.err == nil {
			d.err = errVconnClosed
		}
	}()
	c.held = d
	return c, nil
}

// held is the Respire connection behind a dedicated vconn.
type held struct {
	c      *vconn
	cmds   chan []string
	cancel context.CancelFunc
	ready  chan struct{} // closed once the Respire connection is up
	done   chan struct{}
	err    error // why the connection ended, once done is closed
	once   sync.Once
}

// serve runs the commands go-redis wrote, in order, until the vconn
// closes.
func (d *held) serve(ctx context.Context, conn *respire.Conn) {
	for {
		select {
		case <-ctx.Done():
			return
		case words := <-d.cmds:
			args := make([]any, len(words))
			for i, w := range words {
				args[i] = w
			}
			r, _ := conn.Do(ctx, args...) // an error reply is in r, as a null is
			if r.Type() == respire.ReplyInvalid {
				// No reply: the connection is broken; so is go-redis's.
				d.c.shut()
				return
			}
			d.c.push(appendReply(nil, r, d.c.proto))
		}
	}
}

// send queues a command for serve, or returns why the connection ended.
func (d *held) send(words []string) error {
	select {
	case <-d.ready:
	case <-d.done:
		return d.err
	}
	select {
	case d.cmds <- words:
		return nil
	case <-d.done:
		return d.err
	}
}

func (d *held) close() {
	d.once.Do(func() {
		d.cancel()
		<-d.done
	})
}
