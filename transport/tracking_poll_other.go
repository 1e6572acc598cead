//go:build !linux

package transport

import (
	"net"
	"sync"
)

// pollConn is Linux only (see tracking_drain.go); elsewhere the reader
// goroutine of a tracking connection reads as any other.
type pollConn struct{ mu sync.Mutex }

func newPollConn(net.Conn) *pollConn { return nil }

func (*pollConn) waitReadable() error { return nil }
