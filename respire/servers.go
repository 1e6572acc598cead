package respire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/respire-go/respire/internal/transport"
)

// ErrUnsupported is wrapped by the error of a command that the connected
// server does not have, found from the spec before anything is sent.
var ErrUnsupported = errors.New("respire: command not available on this server")

// UnsupportedError names the command (and, for an argument that only some
// servers have, the argument) and the server that lacks it.
type UnsupportedError struct {
	Command     string   // e.g. "HGETEX"
	Argument    string   // e.g. "IFEQ" for SET IFEQ on Redis 8.0; "" when the whole command is missing
	Server      string   // e.g. "redis 7.0.15"
	AvailableOn []string // servers of the spec that have it
}

func (e *UnsupportedError) Error() string {
	what := e.Command
	if e.Argument != "" {
		what = e.Command + " argument " + e.Argument
	}
	return fmt.Sprintf("respire: %s is not available on %s (the spec has it on %s)",
		what, e.Server, strings.Join(e.AvailableOn, ", "))
}

// Unwrap makes errors.Is(err, ErrUnsupported) hold.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Is makes errors.Is(err, ErrNotSent) hold: nothing was sent.
func (e *UnsupportedError) Is(target error) bool { return target == ErrNotSent }

// serverSet is a set of the spec's servers, one bit each; the bits and the
// table specServers are generated from the spec (zz_servers.go).
type serverSet uint32

// specServer is one server the spec was dumped from.
type specServer struct {
	bit     serverSet
	product string // "redis", as the handshake names it
	prefix  string // "8.6.": the versions that count as this server
	name    string // "redis 8.6", for errors
}

// serverBit maps a handshake's server to a spec server; 0 when the server
// is not one the spec knows (then nothing is checked and the server
// answers for itself).
func serverBit(info transport.ConnInfo) serverSet {
	for _, s := range specServers {
		if strings.EqualFold(info.Server, s.product) && strings.HasPrefix(info.Version, s.prefix) {
			return s.bit
		}
	}
	return 0
}

// serverBitCache remembers the spec server of one handshake.
type serverBitCache struct {
	info *transport.ConnInfo
	bit  serverSet
}

// specServer returns the spec server of the connected server, cached per
// handshake; nil while no handshake is known.
func (c *Client) specServer() *serverBitCache {
	si := c.serverInfo()
	if si == nil {
		return nil
	}
	sb := c.srvBit.Load()
	if sb == nil || sb.info != si {
		sb = &serverBitCache{info: si, bit: serverBit(*si)}
		c.srvBit.Store(sb)
	}
	return sb
}

// unsupported returns the error for a command the connected server lacks,
// or nil. It notes the server in x for the argument checks (cmd.needs).
func (c *Client) unsupported(x *cmd, info *cmdInfo) error {
	if info.servers == 0 {
		return nil
	}
	sb := c.specServer()
	if sb == nil {
		return nil
	}
	x.srv = sb
	if sb.bit == 0 || info.servers&sb.bit != 0 {
		return nil
	}
	return &UnsupportedError{Command: info.name, Server: sb.info.Server + " " + sb.info.Version,
		AvailableOn: serverNames(info.servers)}
}

// needs fails x, before anything is sent, when the connected server is one
// of the spec's and lacks the argument (named by its token: "IFEQ"); set
// is the spec servers that have it. Generated code calls it for every
// argument that only some of the command's servers have, when given.
func (x *cmd) needs(argument string, set serverSet) {
	sb := x.srv
	if sb == nil || sb.bit == 0 || set&sb.bit != 0 {
		return
	}
	x.fail(&UnsupportedError{Command: x.info.name, Argument: argument,
		Server: sb.info.Server + " " + sb.info.Version, AvailableOn: serverNames(set)})
}

// serverNames lists the spec servers of set, for errors.
func serverNames(set serverSet) []string {
	var out []string
	for _, s := range specServers {
		if set&s.bit != 0 {
			out = append(out, s.name)
		}
	}
	return out
}
