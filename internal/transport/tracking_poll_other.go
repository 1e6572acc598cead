//go:build !linux

package transport

import (
	"net"
	"time"
)

// pollConn is Linux only (see tracking_drain.go); elsewhere the reader
// goroutine of a tracking connection reads as any other.
type pollConn struct{}

func newPollConn(net.Conn) *pollConn { return nil }

func (*pollConn) Read([]byte) (int, error) { return 0, net.ErrClosed }
func (*pollConn) waitReadable() error      { return nil }
func (*pollConn) tryTake() bool            { return false }
func (*pollConn) release()                 {}
func (*pollConn) heldFor() time.Duration   { return 0 }
