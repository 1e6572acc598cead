package respire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/respire-go/respire/transport"
)

// ErrUnsupported is wrapped by the error of a command that the connected
// server does not have, found from the spec before anything is sent.
var ErrUnsupported = errors.New("respire: command not available on this server")

// UnsupportedError names the command and the server that lacks it.
type UnsupportedError struct {
	Command     string   // e.g. "HGETEX"
	Server      string   // e.g. "redis 7.0.15"
	AvailableOn []string // servers of the spec that have it
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("respire: %s is not available on %s (the spec has it on %s)",
		e.Command, e.Server, strings.Join(e.AvailableOn, ", "))
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

// unsupported returns the error for a command the connected server lacks,
// or nil.
func (c *Client) unsupported(info *cmdInfo) error {
	if info.servers == 0 {
		return nil
	}
	si := c.serverInfo()
	if si == nil {
		return nil
	}
	sb := c.srvBit.Load()
	if sb == nil || sb.info != si {
		sb = &serverBitCache{info: si, bit: serverBit(*si)}
		c.srvBit.Store(sb)
	}
	if sb.bit == 0 || info.servers&sb.bit != 0 {
		return nil
	}
	e := &UnsupportedError{Command: info.name, Server: si.Server + " " + si.Version}
	for _, s := range specServers {
		if info.servers&s.bit != 0 {
			e.AvailableOn = append(e.AvailableOn, s.name)
		}
	}
	return e
}
