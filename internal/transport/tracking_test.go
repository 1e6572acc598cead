package transport

import (
	"context"
	"sync"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that can only speak RESP2 fails the handshake of a tracking
// connection with a clear error instead of caching without invalidations.
func TestTrackingNeedsRESP3(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return "-ERR unknown command 'HELLO'\r\n"
		}
		return "+OK\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), Tracking: &Tracking{}, FailFast: true})
	defer m.Close()
	err := m.Connect(context.Background())
	require.ErrorIs(t, err, ErrTrackingNeedsRESP3)
	var he *HandshakeError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "CLIENT TRACKING", he.Step)
}

// Invalidations reach the Tracking in order with replies, before the reply
// that follows them; other pushes (not pub/sub ones) still go to OnPush; a null invalidation
// flushes; a broken connection flushes before it is replaced.
func TestTrackingPushes(t *testing.T) {
	var mu sync.Mutex
	var events []string
	var tracking []string
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "CLIENT":
			mu.Lock()
			tracking = append(tracking, args[1]+" "+args[2]+" "+args[3]+" "+args[len(args)-1])
			mu.Unlock()
			return "+OK\r\n"
		case "KEYS":
			return ">2\r\n$10\r\ninvalidate\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n" +
				">2\r\n$9\r\nsome-push\r\n$1\r\nm\r\n" +
				"+" + args[1] + "\r\n"
		case "FLUSH":
			return ">2\r\n$10\r\ninvalidate\r\n_\r\n+" + args[1] + "\r\n"
		case "DIE":
			return "!!garbage\r\n"
		}
		return "+" + args[1] + "\r\n"
	})
	add := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
	tr := &Tracking{
		Broadcast:  true,
		Prefixes:   []string{"p:"},
		Invalidate: func(k []byte) { add("inv " + string(k)) },
		Flush:      func() { add("flush") },
	}
	m := NewMux(Config{Addr: p.Addr(), Tracking: tr, OnPush: func(resp.Msg) { add("push") }})
	defer m.Close()
	ctx := context.Background()
	do := func(args ...string) {
		r := &orderReq{add: add}
		r.Init(r)
		r.SetPayload(resp.AppendCommand(nil, args...))
		require.NoError(t, m.Do(ctx, &r.Request))
	}
	do("KEYS", "r1")
	do("FLUSH", "r2")
	mu.Lock()
	assert.Equal(t, []string{"inv a", "inv b", "push", "reply r1", "flush", "reply r2"}, events)
	assert.Equal(t, []string{"TRACKING ON BCAST p:"}, tracking)
	events = nil
	mu.Unlock()

	// A broken connection flushes; the next one tracks again.
	r := &orderReq{add: add}
	r.Init(r)
	r.SetPayload(resp.AppendCommand(nil, "DIE", "x"))
	require.Error(t, m.Do(ctx, &r.Request))
	do("ECHO", "r3")
	mu.Lock()
	assert.Equal(t, []string{"flush", "reply r3"}, events)
	assert.Len(t, tracking, 2)
	mu.Unlock()
}

type orderReq struct {
	Request
	add func(string)
}

func (r *orderReq) HandleReply(m resp.Msg) { r.add("reply " + m.Tree().Str) }
func (r *orderReq) Recycle()               {}
