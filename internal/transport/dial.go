package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// dial opens and handshakes one connection. The returned reader holds no
// buffered bytes.
func dial(ctx context.Context, cfg *Config) (net.Conn, *resp.Reader, ConnInfo, error) {
	if cfg.Resolve != nil {
		resolved := *cfg
		resolved.Addr, resolved.Resolve = cfg.Resolve(), nil
		cfg = &resolved
		if cfg.Addr == "" {
			return nil, nil, ConnInfo{}, ErrNoAddress
		}
	}
	if cfg.OnDial != nil {
		return dialObserved(ctx, cfg)
	}
	info := ConnInfo{Addr: cfg.Addr}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if cfg.Credentials != nil {
		user, pass, gen, err := cfg.Credentials.fetch(ctx)
		if err != nil {
			return nil, nil, info, &HandshakeError{Step: "credentials", Err: err}
		}
		withCreds := *cfg
		withCreds.Username, withCreds.Password = user, pass
		cfg = &withCreds
		info.authGen = gen
	}
	nc, err := dialStream(ctx, cfg)
	if err != nil {
		return nil, nil, info, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAlive(true)
	}
	if cfg.TLS != nil {
		tcfg := cfg.TLS.Clone()
		if tcfg.ServerName == "" && !tcfg.InsecureSkipVerify {
			host, _, err := net.SplitHostPort(cfg.Addr)
			if err != nil {
				host = cfg.Addr
			}
			tcfg.ServerName = host
		}
		tc := tls.Client(nc, tcfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, nil, info, explainTLS(cfg, nil, &HandshakeError{Step: "TLS", Err: err})
		}
		nc = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	// Unblock the handshake if ctx ends before its deadline (Close, caller).
	stop := interruptOn(ctx, nc)
	rd := resp.NewReader(nc, cfg.Limits)
	info, err = handshake(nc, rd, cfg, info)
	if err == nil && cfg.Credentials != nil {
		// A rotation while this connection was dialed may have missed it.
		info.authGen, err = cfg.Credentials.upToDate(ctx, info.authGen, cfg.Addr, func(payload []byte) (*ServerError, error) {
			return authRoundTrip(nc, rd, payload)
		})
	}
	if err == nil && cfg.Setup != nil {
		err = runSetup(ctx, nc, rd, cfg, info)
	}
	stop()
	if err != nil {
		err = explainTLS(cfg, nc, err)
		nc.Close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, nil, info, err
	}
	_ = nc.SetDeadline(time.Time{})
	return nc, rd, info, nil
}

// interruptOn makes I/O on nc fail at once when ctx ends, until stop is
// called. stop reports whether it came first; when it did not, it returns
// only once the deadline that interrupts nc is set, so that the caller can
// clear it and know it stays cleared: a deadline set for a context that
// ended must not outlive the step it was for (a connection handed on with
// it would fail its next user's command with an i/o timeout).
func interruptOn(ctx context.Context, nc net.Conn) (stop func() bool) {
	fired := make(chan struct{})
	after := context.AfterFunc(ctx, func() {
		_ = nc.SetDeadline(aLongTimeAgo)
		close(fired)
	})
	return func() bool {
		if after() {
			return true
		}
		<-fired
		return false
	}
}

// dialStream opens the byte stream of a connection: with cfg.Dialer when
// set, else with a net.Dialer.
func dialStream(ctx context.Context, cfg *Config) (net.Conn, error) {
	if cfg.Dialer == nil {
		var d net.Dialer
		return d.DialContext(ctx, cfg.Network, cfg.Addr)
	}
	nc, err := cfg.Dialer(ctx, cfg.Network, cfg.Addr)
	if err == nil && nc == nil {
		err = fmt.Errorf("respire: Dialer returned neither a connection nor an error for %s", cfg.Addr)
	}
	return nc, err
}

// authRoundTrip sends an AUTH (payload) and returns the server's error
// reply to it, if any.
func authRoundTrip(nc net.Conn, rd *resp.Reader, payload []byte) (*ServerError, error) {
	if _, err := nc.Write(payload); err != nil {
		return nil, err
	}
	m, err := rd.Next()
	if err != nil {
		return nil, err
	}
	if v := m[m.Value(0)]; v.IsError() {
		return NewServerError(string(v.Data)), nil
	}
	return nil, nil
}

type hsStep struct {
	name string
	args []string
	// optional steps may be refused without failing the handshake.
	optional bool
}

// clientInfoSteps are the CLIENT SETINFO commands that name the library,
// or none without cfg.LibName. Servers before Redis 7.2 (and Valkey 8)
// refuse them, which is no reason to fail the handshake.
func clientInfoSteps(cfg *Config) []hsStep {
	if cfg.LibName == "" {
		return nil
	}
	steps := []hsStep{{"CLIENT SETINFO", []string{"CLIENT", "SETINFO", "LIB-NAME", cfg.LibName}, true}}
	if cfg.LibVersion != "" {
		steps = append(steps, hsStep{"CLIENT SETINFO", []string{"CLIENT", "SETINFO", "LIB-VER", cfg.LibVersion}, true})
	}
	return steps
}

func handshake(nc net.Conn, rd *resp.Reader, cfg *Config, info ConnInfo) (ConnInfo, error) {
	var steps []hsStep
	libSteps := clientInfoSteps(cfg)
	proto := cfg.Protocol
	// HELLO is sent for RESP2 too (HELLO 2): it authenticates, names the
	// connection and tells the server's name and version in one round trip.
	helloOK := false
	mode := "" // the server's mode as HELLO reports it: standalone, cluster, sentinel
	{
		args := []string{"HELLO", "3"}
		if proto == 2 {
			args[1] = "2"
		}
		if cfg.Password != "" {
			user := cfg.Username
			if user == "" {
				user = "default"
			}
			args = append(args, "AUTH", user, cfg.Password)
		}
		if cfg.ClientName != "" {
			args = append(args, "SETNAME", cfg.ClientName)
		}
		// CLIENT SETINFO goes in the same write: its replies are read
		// and ignored, and it is sent again after AUTH when HELLO is
		// refused.
		buf := resp.AppendCommand(nil, args...)
		for _, s := range libSteps {
			buf = resp.AppendCommand(buf, s.args...)
		}
		reply, err := roundTrip(nc, rd, buf)
		if err != nil {
			return info, &HandshakeError{Step: "HELLO", Err: err}
		}
		for range libSteps {
			if _, err := rd.Next(); err != nil {
				return info, &HandshakeError{Step: "CLIENT SETINFO", Err: err}
			}
		}
		var se *ServerError
		switch {
		case reply.Type == resp.TypeMap || reply.Type == resp.TypeArray:
			helloOK = true
			info.Protocol = 3
			if proto == 2 {
				info.Protocol = 2
			}
			readHello(reply, &info)
			mode = helloString(reply, "mode")
		case errors.As(reply.err("HELLO"), &se) && proto != 3 && helloRefused(se):
			// An old server or a proxy: AUTH and CLIENT SETNAME below.
		default:
			if e := reply.err("HELLO"); e != nil {
				return info, &HandshakeError{Step: "HELLO", Err: e}
			}
			return info, &HandshakeError{Step: "HELLO", Err: errors.New("unexpected reply " + reply.Type.String())}
		}
	}
	if !helloOK {
		info.Protocol = 2
		if cfg.Password != "" {
			if cfg.Username != "" {
				steps = append(steps, hsStep{name: "AUTH", args: []string{"AUTH", cfg.Username, cfg.Password}})
			} else {
				steps = append(steps, hsStep{name: "AUTH", args: []string{"AUTH", cfg.Password}})
			}
		}
		if cfg.ClientName != "" {
			steps = append(steps, hsStep{name: "CLIENT SETNAME", args: []string{"CLIENT", "SETNAME", cfg.ClientName}})
		}
		steps = append(steps, libSteps...)
	}
	if cfg.DB != 0 {
		steps = append(steps, hsStep{name: "SELECT", args: []string{"SELECT", strconv.Itoa(cfg.DB)}})
	}
	steps = append(steps, redirectSteps(cfg, info, mode)...)
	if cfg.NodeID != "" {
		steps = append(steps, hsStep{name: "CLUSTER MYID", args: []string{"CLUSTER", "MYID"}})
	}
	if cfg.ReadOnly {
		steps = append(steps, hsStep{name: "READONLY", args: []string{"READONLY"}})
	}
	if cfg.Role != "" {
		steps = append(steps, hsStep{name: "ROLE", args: []string{"ROLE"}})
	}
	if cfg.Tracking != nil {
		if info.Protocol != 3 {
			return info, &HandshakeError{Step: "CLIENT TRACKING", Err: ErrTrackingNeedsRESP3}
		}
		steps = append(steps, hsStep{name: "CLIENT TRACKING", args: cfg.Tracking.command()})
	}
	if len(steps) == 0 {
		return info, nil
	}
	// Pipeline the remaining steps in one write.
	var buf []byte
	for _, s := range steps {
		buf = resp.AppendCommand(buf, s.args...)
	}
	if _, err := nc.Write(buf); err != nil {
		return info, &HandshakeError{Step: steps[0].name, Err: err}
	}
	var first error
	for _, s := range steps {
		m, err := rd.Next()
		if err != nil {
			return info, &HandshakeError{Step: s.name, Err: err}
		}
		r := treeReply{m.Tree()}
		if s.optional {
			continue
		}
		if e := r.err(s.name); e != nil && first == nil {
			if s.name == "SELECT" {
				e = selectError(cfg, mode, e)
			}
			first = &HandshakeError{Step: s.name, Err: e}
		}
		if s.name == "CLUSTER MYID" && r.err(s.name) == nil && r.Str != cfg.NodeID && first == nil {
			first = &HandshakeError{Step: s.name, Err: fmt.Errorf("%w: %s answers as node %q, not %q", ErrWrongNode, cfg.Addr, r.Str, cfg.NodeID)}
		}
		if s.name == "ROLE" && r.err(s.name) == nil && first == nil {
			if err := checkRole(r, cfg); err != nil {
				first = &HandshakeError{Step: s.name, Err: err}
			}
		}
	}
	return info, first
}

// helloRefused tells an old server or proxy that lacks HELLO or RESP3 from
// a real failure such as a wrong password.
func helloRefused(se *ServerError) bool {
	if se.Prefix == "NOPROTO" {
		return true
	}
	msg := strings.ToLower(se.Message)
	return se.Prefix == "ERR" && (strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown subcommand"))
}

type treeReply struct{ resp.Value }

// err returns the error reply to command, or nil.
func (r treeReply) err(command string) error {
	if r.Type == resp.TypeSimpleError || r.Type == resp.TypeBulkError {
		se := NewServerError(r.Str)
		se.Command = command
		return se
	}
	return nil
}

// roundTrip writes buf, one or more commands, and returns the first reply.
func roundTrip(nc net.Conn, rd *resp.Reader, buf []byte) (treeReply, error) {
	if _, err := nc.Write(buf); err != nil {
		return treeReply{}, err
	}
	m, err := rd.Next()
	if err != nil {
		return treeReply{}, err
	}
	return treeReply{m.Tree()}, nil
}

func readHello(v treeReply, info *ConnInfo) {
	for i := 0; i+1 < len(v.Elems); i += 2 {
		switch v.Elems[i].Str {
		case "server":
			info.Server = v.Elems[i+1].Str
		case "version":
			info.Version = v.Elems[i+1].Str
		case "id":
			info.ID = v.Elems[i+1].Int
		case "availability_zone":
			info.Zone = v.Elems[i+1].Str
		}
	}
}
