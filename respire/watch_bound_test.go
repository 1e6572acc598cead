package respire

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contendedPeer is a server on which every EXEC fails as if a watched key
// had changed, and which counts the EXECs.
func contendedPeer(t *testing.T) (*testpeer.Peer, *atomic.Int64) {
	var execs atomic.Int64
	p := testpeer.Start(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "SET":
			return "+QUEUED\r\n"
		case "EXEC":
			execs.Add(1)
			return "_\r\n"
		}
		return "+OK\r\n"
	})
	return p, &execs
}

func TestWatchRetryStopsAfterWatchRetries(t *testing.T) {
	p, execs := contendedPeer(t)
	c, err := NewClient(Options{Addr: p.Addr(), WatchRetries: 3})
	require.NoError(t, err)
	defer c.Close()
	calls := 0
	err = c.WatchRetry(context.Background(), func(tx *Tx) error {
		calls++
		tx.Set("k", "v", nil)
		return nil
	}, "k")
	require.ErrorIs(t, err, TxFailed)
	assert.Contains(t, err.Error(), "3 attempts")
	assert.Equal(t, 3, calls)
	assert.Equal(t, int64(3), execs.Load())
}

func TestWatchRetryDefaultBound(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2 s of back-off")
	}
	p, _ := contendedPeer(t)
	c, err := NewClient(Options{Addr: p.Addr()})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	calls := 0
	err = c.WatchRetry(ctx, func(tx *Tx) error {
		calls++
		tx.Set("k", "v", nil)
		return nil
	}, "k")
	require.ErrorIs(t, err, TxFailed)
	require.NoError(t, ctx.Err(), "the bound, not the context, ended the loop")
	assert.Equal(t, DefaultWatchRetries, calls)
}

func TestWatchRetriesNegative(t *testing.T) {
	_, err := NewClient(Options{WatchRetries: -1})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "WatchRetries")
}
