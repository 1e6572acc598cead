package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Credentials that rotate.
//
// A Credentials is shared by every Config of one client (Configs are
// copied; the pointer is not), so that the Muxes, pub/sub hubs and blocking
// pools made from them register with it, and Rotate reaches all of them,
// including those of cluster nodes learnt later. Each new connection asks
// the provider during its handshake. Rotate sends AUTH on every live
// connection as an ordinary request, queued behind the commands in flight
// (replies are matched in order, so none of them is affected). The
// connections of a blocking pool, which run one command at a time, are
// sent AUTH before their next command instead. gen numbers the rotations,
// so that a connection dialed with credentials older than the last
// rotation is brought up to date before it is used.

// Credentials supplies the username and password of new connections and
// re-authenticates live ones on Rotate. Make one with NewCredentials and
// put it in every Config of a client.
type Credentials struct {
	provider func(ctx context.Context) (username, password string, err error)

	mu         sync.Mutex
	gen        uint64
	user, pass string // of the last rotation
	muxes      map[*Mux]struct{}
	hubs       map[*PubSub]struct{}
	pools      map[*BlockingPool]struct{}
}

// NewCredentials returns Credentials that ask provider, which must be safe
// for concurrent use, for each new connection and each rotation.
func NewCredentials(provider func(ctx context.Context) (username, password string, err error)) *Credentials {
	return &Credentials{
		provider: provider,
		muxes:    make(map[*Mux]struct{}),
		hubs:     make(map[*PubSub]struct{}),
		pools:    make(map[*BlockingPool]struct{}),
	}
}

// ErrCredentials is wrapped by the handshake error of a connection whose
// credentials provider failed, and by Rotate's error then. It is not a
// permanent error: the connection is dialed again with backoff.
var ErrCredentials = errors.New("respire: credentials provider failed")

// fetch asks the provider, and returns the generation the answer is at
// least as new as.
func (cr *Credentials) fetch(ctx context.Context) (user, pass string, gen uint64, err error) {
	cr.mu.Lock()
	gen = cr.gen
	cr.mu.Unlock()
	user, pass, err = cr.provider(ctx)
	if err != nil {
		return "", "", 0, fmt.Errorf("%w: %w", ErrCredentials, err)
	}
	return user, pass, gen, nil
}

// generation returns the number of rotations so far.
func (cr *Credentials) generation() uint64 {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.gen
}

// current returns the generation and credentials of the last rotation.
func (cr *Credentials) current() (gen uint64, user, pass string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.gen, cr.user, cr.pass
}

// Rotate asks the provider for credentials once and sends AUTH with them
// on every live connection of every Mux, pub/sub hub and blocking pool
// that uses cr, one connection after the other: on a multiplexed one as an
// ordinary request behind the commands in flight on it, on an idle one of
// a blocking pool at once; a busy one of a blocking pool is sent AUTH
// before its next command. New connections ask the provider themselves,
// so the provider must give the new credentials before Rotate is called.
//
// An empty password sends nothing, as a handshake sends no AUTH then.
// A connection that breaks meanwhile is skipped: its replacement
// authenticates with the provider's credentials. A pub/sub connection in
// RESP2, where the server refuses AUTH while subscribed, keeps the
// credentials it had until it is dialed again. The error joins those of the
// connections that refused the credentials (a *HandshakeError, step AUTH,
// wrapping the server's *ServerError such as WRONGPASS), or wraps ctx's
// error or ErrCredentials.
func (cr *Credentials) Rotate(ctx context.Context) error {
	user, pass, _, err := cr.fetch(ctx)
	if err != nil {
		return err
	}
	cr.mu.Lock()
	cr.gen++
	cr.user, cr.pass = user, pass
	if pass == "" {
		// No password, no AUTH, as in a handshake: the connections keep
		// what they have.
		cr.mu.Unlock()
		return nil
	}
	muxes := make([]*Mux, 0, len(cr.muxes))
	for m := range cr.muxes {
		muxes = append(muxes, m)
	}
	hubs := make([]*PubSub, 0, len(cr.hubs))
	for h := range cr.hubs {
		hubs = append(hubs, h)
	}
	pools := make([]*BlockingPool, 0, len(cr.pools))
	for p := range cr.pools {
		pools = append(pools, p)
	}
	cr.mu.Unlock()
	payload := resp.AppendCommand(nil, authArgs(user, pass)...)
	var errs []error
	for _, m := range muxes {
		if err := m.reauth(ctx, payload); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
	}
	for _, h := range hubs {
		if err := h.reauth(ctx, user, pass); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
	}
	for _, p := range pools {
		if err := p.reauthIdle(ctx); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
	}
	return errors.Join(errs...)
}

// authArgs is the AUTH command for user and pass: the one-argument form
// without a username, which servers before ACLs also know.
func authArgs(user, pass string) []string {
	if user == "" {
		return []string{"AUTH", pass}
	}
	return []string{"AUTH", user, pass}
}

func (cr *Credentials) addMux(m *Mux) {
	if cr != nil {
		cr.mu.Lock()
		cr.muxes[m] = struct{}{}
		cr.mu.Unlock()
	}
}

func (cr *Credentials) removeMux(m *Mux) {
	if cr != nil {
		cr.mu.Lock()
		delete(cr.muxes, m)
		cr.mu.Unlock()
	}
}

func (cr *Credentials) addPool(p *BlockingPool) {
	if cr != nil {
		cr.mu.Lock()
		cr.pools[p] = struct{}{}
		cr.mu.Unlock()
	}
}

func (cr *Credentials) removePool(p *BlockingPool) {
	if cr != nil {
		cr.mu.Lock()
		delete(cr.pools, p)
		cr.mu.Unlock()
	}
}

func (cr *Credentials) addHub(h *PubSub) {
	if cr != nil {
		cr.mu.Lock()
		cr.hubs[h] = struct{}{}
		cr.mu.Unlock()
	}
}

func (cr *Credentials) removeHub(h *PubSub) {
	if cr != nil {
		cr.mu.Lock()
		delete(cr.hubs, h)
		cr.mu.Unlock()
	}
}

// authError is the error of a refused AUTH.
func authError(addr string, se *ServerError) error {
	se.Command = "AUTH"
	return &reauthError{addr: addr, err: &HandshakeError{Step: "AUTH", Err: se}}
}

// reauthError is the error of a connection that refused a rotation's
// credentials.
type reauthError struct {
	addr string
	err  *HandshakeError
}

func (e *reauthError) Error() string {
	return "respire: re-authenticating on " + e.addr + ": " + Trim(e.err)
}

func (e *reauthError) Unwrap() error { return e.err }

// reauth sends payload, an AUTH, on each live connection of m in turn and
// waits for its reply.
func (m *Mux) reauth(ctx context.Context, payload []byte) error {
	var errs []error
	for _, s := range m.slots {
		c := s.cur.Load()
		if c == nil || c.broken() {
			continue
		}
		if err := c.reauth(ctx, payload); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// reauth sends payload, an AUTH, on c as an ordinary request and waits for
// its reply. A connection that breaks meanwhile is no error: its
// replacement asks the provider, so it has the new credentials.
func (c *conn) reauth(ctx context.Context, payload []byte) error {
	h := &authHandler{}
	r := &Request{}
	r.Init(h)
	r.payload = payload
	r.state.Store(stateWaiting)
	if c.send(r) != nil {
		return nil
	}
	var abandoned bool
	var err error
	if c.direct {
		abandoned, err = c.waitDirect(ctx, r, 1)
	} else {
		abandoned, err = c.wait(ctx, r)
	}
	switch {
	case abandoned:
		return err
	case err == nil && h.err != nil:
		return authError(c.info.Addr, h.err)
	}
	return nil
}

// authHandler keeps the error reply to an AUTH sent by Rotate.
type authHandler struct{ err *ServerError }

func (h *authHandler) HandleReply(m resp.Msg) {
	if v := m[m.Value(0)]; v.IsError() {
		h.err = NewServerError(string(v.Data))
	}
}

func (h *authHandler) Recycle() {}

// upToDate re-authenticates a connection dialed with the credentials of
// generation gen when a rotation happened since, and returns the
// generation it is now at.
func (cr *Credentials) upToDate(ctx context.Context, gen uint64, addr string, do func(payload []byte) (*ServerError, error)) (uint64, error) {
	for {
		now, user, pass := cr.current()
		if now == gen || pass == "" {
			return now, nil
		}
		se, err := do(resp.AppendCommand(nil, authArgs(user, pass)...))
		if err != nil {
			return gen, err
		}
		if se != nil {
			return gen, authError(addr, se)
		}
		gen = now
		if err := ctx.Err(); err != nil {
			return gen, err
		}
	}
}
