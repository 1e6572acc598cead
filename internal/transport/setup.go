package transport

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// StepSetup is the Step of the *HandshakeError of a connection whose
// Config.Setup hook failed.
const StepSetup = "OnConnect"

// SetupConn is a new connection lent to Config.Setup at the end of its
// handshake, before any other request uses it. It runs one command at a
// time on the hook's goroutine and is valid only during the call.
type SetupConn struct {
	nc   net.Conn
	rd   *resp.Reader
	cfg  *Config
	info ConnInfo
	// transient records a failure that trying again may fix: the
	// connection broke, or the server answered LOADING, BUSY, ...
	transient bool
	done      bool
	deadline  time.Time // the handshake's, restored after a hook's context ended
}

// Info describes the connection, as negotiated by its handshake.
func (sc *SetupConn) Info() ConnInfo { return sc.info }

// errSetupDone is the error of a SetupConn used after its hook returned.
var errSetupDone = errors.New("respire: setup connection used after its OnConnect hook returned")

// Do writes payload, one encoded command, and passes its reply to handle;
// push frames before it go to Config.OnPush, when set. m is valid only
// during handle. The handshake's deadline (Config.DialTimeout) bounds it,
// and so does ctx.
func (sc *SetupConn) Do(ctx context.Context, payload []byte, handle func(m resp.Msg)) error {
	if sc.done {
		return errSetupDone
	}
	if err := ctx.Err(); err != nil {
		sc.transient = true
		return NotSent(err)
	}
	stop := interruptOn(ctx, sc.nc)
	defer func() {
		if !stop() {
			// The hook's context ended: the handshake's own deadline
			// bounds what the hook does next, not this one's.
			_ = sc.nc.SetDeadline(sc.deadline)
		}
	}()
	if _, err := sc.nc.Write(payload); err != nil {
		sc.transient = true
		return &ConnError{Addr: sc.info.Addr, Err: err}
	}
	for {
		m, err := sc.rd.Next()
		if err != nil {
			sc.transient = true
			if ctx.Err() != nil {
				err = errors.Join(ctx.Err(), err)
			}
			return &ConnError{Addr: sc.info.Addr, Err: err}
		}
		if m[m.Value(0)].Type == resp.TypePush {
			if sc.cfg.OnPush != nil {
				sc.cfg.OnPush(m)
			}
			continue
		}
		if v := m[m.Value(0)]; v.IsError() && transientPrefix(NewServerError(string(v.Data)).Prefix) {
			sc.transient = true
		}
		handle(m)
		return nil
	}
}

// transientPrefix reports an error reply that a server gives while it
// cannot serve yet or for now.
func transientPrefix(prefix string) bool {
	switch prefix {
	case "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN":
		return true
	}
	return false
}

// runSetup runs cfg.Setup on a connection whose handshake succeeded.
func runSetup(ctx context.Context, nc net.Conn, rd *resp.Reader, cfg *Config, info ConnInfo) error {
	sc := &SetupConn{nc: nc, rd: rd, cfg: cfg, info: info}
	sc.deadline, _ = ctx.Deadline()
	err := cfg.Setup(ctx, sc)
	sc.done = true
	if err == nil {
		return nil
	}
	return &HandshakeError{Step: StepSetup, Err: err, transient: sc.transient || ctx.Err() != nil}
}
