package integration

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaseValues are the values the Lease and Append forms must return byte
// for byte: empty, binary with CR/LF and NUL, text that looks like RESP,
// and 1 MiB of random bytes (larger than any read buffer).
func leaseValues(t *testing.T) map[string]string {
	big := make([]byte, 1<<20)
	_, err := rand.Read(big)
	require.NoError(t, err)
	return map[string]string{
		"empty":  "",
		"crlf":   "a\r\nb\r\n\r\n",
		"binary": "\x00\xff\r\n$-1\r\n\x00",
		"resp":   "*2\r\n$1\r\nx\r\n:1\r\n",
		"digits": "12345",
		"1MiB":   string(big),
	}
}

func TestLeaseAndAppendForms(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	vals := leaseValues(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, Filler: m.filler, Protocol: m.protocol})
			ctx := ctxT(t)
			pre := "lease:" + m.name + ":"
			for name, v := range vals {
				require.NoError(t, c.Set(ctx, pre+name, v, nil))
				_, err := c.HSet(ctx, pre+"h", respire.FieldValue{Field: name, Value: v})
				require.NoError(t, err)
			}
			for name, v := range vals {
				l, err := c.GetLease(ctx, pre+name)
				require.NoError(t, err, name)
				require.Equal(t, len(v), l.Len(), name)
				require.True(t, string(l.Bytes()) == v, "%s: GetLease bytes differ", name)
				l.Release()

				l, err = c.HGetLease(ctx, pre+"h", name)
				require.NoError(t, err, name)
				require.True(t, string(l.Bytes()) == v, "%s: HGetLease bytes differ", name)
				l.Release()

				dst := []byte("head|")
				dst, err = c.GetAppend(ctx, dst, pre+name)
				require.NoError(t, err, name)
				require.True(t, string(dst) == "head|"+v, "%s: GetAppend bytes differ", name)
				dst, err = c.HGetAppend(ctx, dst[:5], pre+"h", name)
				require.NoError(t, err, name)
				require.True(t, string(dst) == "head|"+v, "%s: HGetAppend bytes differ", name)
			}

			// Nulls: a nil Lease and Nil; dst comes back unchanged.
			l, err := c.GetLease(ctx, pre+"missing")
			require.ErrorIs(t, err, respire.Nil)
			require.Nil(t, l)
			l.Release() // a nil Lease may be released
			l, err = c.HGetLease(ctx, pre+"h", "missing")
			require.ErrorIs(t, err, respire.Nil)
			require.Nil(t, l)
			dst := append(make([]byte, 0, 16), "keep"...)
			got, err := c.GetAppend(ctx, dst, pre+"missing")
			require.ErrorIs(t, err, respire.Nil)
			require.Equal(t, "keep", string(got))
			got, err = c.HGetAppend(ctx, dst, pre+"missing-hash", "f")
			require.ErrorIs(t, err, respire.Nil)
			require.Equal(t, "keep", string(got))

			// A server error is an error, not a lease.
			_, err = c.LPush(ctx, pre+"list", "x")
			require.NoError(t, err)
			l, err = c.GetLease(ctx, pre+"list")
			require.Error(t, err)
			require.Contains(t, err.Error(), "WRONGTYPE")
			require.Nil(t, l)
			got, err = c.GetAppend(ctx, dst, pre+"list")
			require.Error(t, err)
			require.Equal(t, "keep", string(got))
		})
	}
}

// Other generated forms: a write (LPOP, GETDEL) and a non-null str
// (GETRANGE).
func TestLeaseFormsOfOtherCommands(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	_, err := c.LPush(ctx, "lease:l", "two\r\n", "one\r\n")
	require.NoError(t, err)
	got, err := c.LPopAppend(ctx, nil, "lease:l")
	require.NoError(t, err)
	require.Equal(t, "one\r\n", string(got))
	l, err := c.LPopLease(ctx, "lease:l")
	require.NoError(t, err)
	require.Equal(t, "two\r\n", l.String())
	l.Release()
	_, err = c.LPopLease(ctx, "lease:l")
	require.ErrorIs(t, err, respire.Nil)

	require.NoError(t, c.Set(ctx, "lease:s", "hello world", nil))
	l, err = c.GetRangeLease(ctx, "lease:s", 6, -1)
	require.NoError(t, err)
	require.Equal(t, "world", string(l.Bytes()))
	l.Release()
	got, err = c.GetDelAppend(ctx, got[:0], "lease:s")
	require.NoError(t, err)
	require.Equal(t, "hello world", string(got))
	_, err = c.GetDelAppend(ctx, nil, "lease:s")
	require.ErrorIs(t, err, respire.Nil)
}

// Many callers share the connection and the pool: every value comes back
// whole, whatever the interleaving (run with -race).
func TestLeaseConcurrentCallers(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, filler := range []respire.FillerMode{respire.FillerOff, respire.FillerOn} {
		c := connect(t, respire.Options{Addr: srv.Addr, Filler: filler})
		ctx := ctxT(t)
		const keys = 16
		for k := range keys {
			require.NoError(t, c.Set(ctx, fmt.Sprintf("lease:c%d", k), strings.Repeat(string(rune('a'+k)), 100*k+1), nil))
		}
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				var dst []byte
				for i := range 200 {
					k := (g + i) % keys
					want := strings.Repeat(string(rune('a'+k)), 100*k+1)
					key := fmt.Sprintf("lease:c%d", k)
					if i%2 == 0 {
						l, err := c.GetLease(ctx, key)
						if !assert.NoError(t, err) || !assert.Equal(t, want, string(l.Bytes())) {
							return
						}
						l.Release()
						continue
					}
					var err error
					dst, err = c.GetAppend(ctx, dst[:0], key)
					if !assert.NoError(t, err) || !assert.Equal(t, want, string(dst)) {
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// A caller that gives up (its context ends while BLMOVE blocks) gets dst
// back as it was; the connection is discarded and the client goes on.
func TestAppendAbandonedBlockingCall(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	short, cancel := context.WithCancel(ctx)
	dst := append(make([]byte, 0, 64), "keep"...)
	done := make(chan struct{})
	var got []byte
	var err error
	go func() {
		defer close(done)
		got, err = c.BLMoveAppend(short, dst, "lease:src", "lease:dst", respire.SideLeft, respire.SideRight, 0)
	}()
	// Wait until the server has the caller blocked, then give up.
	waitBlocked(t, srv, 1)
	cancel()
	<-done
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, "keep", string(got))

	_, err = c.LPush(ctx, "lease:src", "v")
	require.NoError(t, err)
	got, err = c.BLMoveAppend(ctx, dst, "lease:src", "lease:dst", respire.SideLeft, respire.SideRight, 0)
	require.NoError(t, err)
	require.Equal(t, "keepv", string(got))
}
