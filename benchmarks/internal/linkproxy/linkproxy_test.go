package linkproxy

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer accepts on loopback and writes back every byte it reads,
// shutting its write side when the peer shuts its own.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
				c.(*net.TCPConn).CloseWrite()
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

func start(t *testing.T, oneWay time.Duration) *Proxy {
	t.Helper()
	p, err := Listen(echoServer(t), oneWay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestDelayApplied: a round trip through the proxy takes at least twice the
// one-way delay (a lower bound only: a loaded machine can only add to it).
func TestDelayApplied(t *testing.T) {
	const oneWay = 20 * time.Millisecond
	p := start(t, oneWay)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 5)
	for range 3 {
		began := time.Now()
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < 2*oneWay {
			t.Errorf("a round trip took %v, less than twice the one-way delay %v", took, oneWay)
		}
		if string(buf) != "hello" {
			t.Errorf("echo %q, want hello", buf)
		}
	}
}

// TestBytesIntact sends a few MiB in writes of random sizes while reading
// the echo concurrently: every byte comes back, in order, and the end of
// the stream is passed on.
func TestBytesIntact(t *testing.T) {
	p := start(t, time.Millisecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	rnd := rand.New(rand.NewPCG(1, 2))
	sent := make([]byte, 4<<20)
	for i := range sent {
		sent[i] = byte(rnd.Uint32())
	}
	writeErr := make(chan error, 1)
	go func() {
		rest := sent
		for len(rest) > 0 {
			n := min(len(rest), 1+rnd.IntN(100<<10))
			if _, err := c.Write(rest[:n]); err != nil {
				writeErr <- err
				return
			}
			rest = rest[n:]
		}
		writeErr <- c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c) // until the echo's end of stream
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sent) {
		t.Fatalf("%d bytes came back of %d sent", len(got), len(sent))
	}
	if !bytes.Equal(sent, got) {
		t.Fatal("the bytes came back changed or out of order")
	}
}

// TestCloseEndsConnections: closing the proxy ends the connections it
// forwards (the client reads an end of stream or an error, never hangs).
func TestCloseEndsConnections(t *testing.T) {
	p := start(t, time.Millisecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(b); err == nil {
		t.Fatal("a read after the proxy closed returned no error")
	}
}

// TestNegativeDelay is refused with an error.
func TestNegativeDelay(t *testing.T) {
	if p, err := Listen("127.0.0.1:1", -time.Millisecond); err == nil {
		p.Close()
		t.Fatal("a negative delay was accepted")
	}
}
