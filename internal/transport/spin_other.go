//go:build !linux

package transport

import (
	"net"
	"time"
)

// spinReader polls sockets on Linux only (see spin.go); elsewhere callers
// always park on the network poller.
type spinReader struct {
	net.Conn
	on bool
}

func newSpinReader(net.Conn, time.Duration) *spinReader { return nil }

// writeNow is never called: newSpinReader returns nil here.
func (s *spinReader) writeNow(p []byte) (int, error) { return s.Conn.Write(p) }
