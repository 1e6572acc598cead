package transport

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRoleHandedForAnsweredBatch: a batch caller waiting for the read role
// is handed it (passRole) just as its own last reply was read. When it
// takes the role, it has nothing left to read and leaves; a single
// caller's reply behind it must still be read. Before the fix the role
// was lost whenever the batch caller's select picked the role (half the
// rounds here), and the single caller waited forever: seen once in the
// cancel storm, two GETs stuck at a load average of 44.
func TestRoleHandedForAnsweredBatch(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		return "+" + args[len(args)-1] + "\r\n"
	})
	m := NewMux(Config{Addr: p.Addr()})
	defer m.Close()
	ctx := context.Background()
	r0 := newTestReq("PING")
	require.NoError(t, m.Do(ctx, &r0.Request))
	c := m.slots[0].cur.Load()
	require.True(t, c.direct, "the default read mode reads directly")
	// The batch caller stops between counting itself a waiter and
	// waiting, until its reply and the role are both handed to it: then
	// its select picks either, as a caller descheduled there does.
	arrived, release := make(chan struct{}), make(chan struct{})
	beforeRoleSelect = func() {
		arrived <- struct{}{}
		<-release
	}
	defer func() { beforeRoleSelect = nil }()
	for i := range 40 {
		// This goroutine takes the read role, as the background reader
		// would, once the previous round's reader has given it up.
		for {
			c.mu.Lock()
			free := !c.reading && c.pending.size == 0
			if free {
				c.reading = true
			}
			c.mu.Unlock()
			if free {
				break
			}
			runtime.Gosched()
		}
		batch, single := newTestReq("ECHO", "batch"), newTestReq("ECHO", "single")
		batch.state.Store(stateWaiting)
		single.state.Store(stateWaiting)
		require.NoError(t, c.send(&batch.Request, &single.Request))
		batchDone := make(chan error, 1)
		go func() {
			_, err := c.waitDirect(ctx, &batch.Request, 2)
			batchDone <- err
		}()
		select {
		case <-arrived:
		case err := <-batchDone:
			t.Fatalf("round %d: the batch caller returned (%v) without waiting for the role", i, err)
		}
		// A single caller that found the role taken waits for its reply
		// to be read by someone else (waitDirect's path then).
		singleDone := make(chan error, 1)
		go func() {
			_, err := c.wait(ctx, &single.Request)
			singleDone <- err
		}()
		// The batch's reply arrives; the role goes to the batch caller,
		// which has nothing left to read.
		msg, err := c.rd.Next()
		require.NoError(t, err)
		c.dispatch(msg)
		c.mu.Lock()
		c.reading = false
		c.mu.Unlock()
		c.passRole()
		release <- struct{}{}
		require.NoError(t, <-batchDone)
		select {
		case err := <-singleDone:
			require.NoError(t, err)
			require.Equal(t, "single", single.got)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the reply behind the batch's was never read: the read role was lost", i)
		}
	}
}
