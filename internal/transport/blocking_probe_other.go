//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package transport

import "net"

// alive cannot peek at a socket on this platform; a connection the server
// closed is found when it is used.
func alive(net.Conn) bool { return true }

// peeker cannot be made on this platform.
type peeker struct{}

func newPeeker(net.Conn) *peeker { return nil }

func (*peeker) alive() bool { return true }

func (*peeker) state() int { return peekEmpty }
