package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCutMidReply: 16 goroutines GET and SET values of 1 MiB through the
// fault proxy, with the options users get by default, while every
// connection is reset (RST) each time a few more calls succeeded: the
// resets land in the middle of replies and of SETs being written, as often
// as the calls make progress, whatever the machine's speed. Reads are sent
// again within their contexts, so every GET succeeds, with its key's own
// value. A SET is never sent again blindly: one that fails is a write
// whose outcome is unknown (a *ConnError, not ErrNotSent), and at most
// two of them fail per reset, since a connection has at most two writes
// of 256 KiB or more written and unanswered at a time (the write window);
// the others wait unwritten and go to the next connection.
func TestCutMidReply(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	c := connect(t, respire.Options{Addr: p.Addr()})
	ctx := ctxT(t)

	const (
		readers, writers = 10, 6
		keys             = 8
		size             = 1 << 20
		cuts             = 30
		// progress is how many calls succeed between two resets.
		progress = 4
		// window is how many large writes a connection has written and
		// unanswered at most: how many SETs one reset can catch.
		window = 2
	)
	key := func(i int) string { return fmt.Sprintf("cutreply:%d", i) }
	values := make([]string, keys)
	for i := range values {
		values[i] = key(i) + strings.Repeat(string(rune('a'+i)), size-len(key(i)))
		require.NoError(t, c.Set(ctx, key(i), values[i], nil))
	}

	var (
		mu           sync.Mutex
		setErrs      []error
		getErrs      []error
		wrong        []string
		gets, sets   atomic.Int64
		done         = make(chan struct{})
		succeeded    = make(chan struct{}, 64)
		cutsMade     atomic.Int64
		cutterExited = make(chan struct{})
	)
	// The cutter resets every connection once progress more calls
	// succeeded, cuts times, then stops the load.
	go func() {
		defer close(cutterExited)
		defer close(done)
		n := 0
		for cutsMade.Load() < cuts {
			select {
			case <-succeeded:
			case <-ctx.Done():
				return
			}
			if n++; n%progress == 0 {
				p.CutRST()
				cutsMade.Add(1)
			}
		}
	}()
	ok := func() {
		select {
		case succeeded <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	for g := range readers + writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				i := (g + n) % keys
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				if g < readers {
					v, err := c.Get(cctx, key(i))
					gets.Add(1)
					mu.Lock()
					switch {
					case err != nil:
						getErrs = append(getErrs, err)
					case v != values[i]:
						wrong = append(wrong, fmt.Sprintf("GET %s: %d bytes, not its value", key(i), len(v)))
					}
					mu.Unlock()
					if err == nil {
						ok()
					}
				} else {
					err := c.Set(cctx, key(i), values[i], nil)
					sets.Add(1)
					if err != nil {
						mu.Lock()
						setErrs = append(setErrs, err)
						mu.Unlock()
					} else {
						ok()
					}
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	<-cutterExited
	require.NoError(t, ctx.Err())

	t.Logf("%d resets, %d connections; %d GETs, %d failed; %d SETs, %d failed (outcome unknown)",
		cutsMade.Load(), p.Accepted(), gets.Load(), len(getErrs), sets.Load(), len(setErrs))
	assert.Empty(t, wrong, "a GET returned another value than its key's")
	for _, err := range getErrs[:min(len(getErrs), 5)] {
		t.Errorf("a GET failed although reads are sent again within their context: %v", err)
	}
	for _, err := range setErrs {
		var ce *respire.ConnError
		if !errors.As(err, &ce) || errors.Is(err, respire.ErrNotSent) {
			t.Errorf("a failed SET is not a write whose outcome is unknown: %v", err)
		}
	}
	assert.LessOrEqual(t, len(setErrs), window*int(cutsMade.Load()),
		"more SETs failed than a reset can catch written and unanswered")
	assert.Greater(t, p.Accepted(), cuts, "every reset broke the connection in use")

	// The values are whole afterwards.
	for i := range keys {
		v, err := c.Get(ctx, key(i))
		require.NoError(t, err)
		assert.True(t, v == values[i], "key %s holds %d bytes, not its value", key(i), len(v))
	}
}
