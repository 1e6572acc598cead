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
			c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: m.readMode, Protocol: m.protocol})
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
	for _, mode := range []respire.ReadMode{respire.ReadModeDefault, respire.ReadModeFiller} {
		c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode})
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

// The multi-element forms, on every server flavor and protocol: every
// element byte for byte (binary, empty, 1 MiB), nulls where keys or
// fields are missing, and the same answers as the plain forms.
func TestLeaseListForms(t *testing.T) {
	vals := leaseValues(t)
	names := make([]string, 0, len(vals))
	for name := range vals {
		names = append(names, name)
	}
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: m.readMode, Protocol: m.protocol})
				ctx := ctxT(t)
				pre := "leaselist:" + m.name + ":"
				var keys, fields, want []string
				var fvs []respire.FieldValue
				for _, name := range names {
					v := vals[name]
					require.NoError(t, c.Set(ctx, pre+name, v, nil))
					fvs = append(fvs, respire.FieldValue{Field: name, Value: v})
					// Each value, then a missing key or field after it.
					keys = append(keys, pre+name, pre+"missing-"+name)
					fields = append(fields, name, "missing-"+name)
					want = append(want, v, "<nil>")
				}
				_, err := c.HSet(ctx, pre+"h", fvs...)
				require.NoError(t, err)
				list := make([]string, len(names))
				for i, name := range names {
					list[i] = vals[name]
				}
				_, err = c.RPush(ctx, pre+"l", list...)
				require.NoError(t, err)

				v, err := c.MGetLease(ctx, keys...)
				require.NoError(t, err)
				requireElems(t, want, v, "MGetLease")
				plain, err := c.MGet(ctx, keys...)
				require.NoError(t, err)
				for i, p := range plain {
					require.Equal(t, !p.Valid, v.Null(i))
					require.True(t, p.V == string(v.Bytes(i)), "MGet and MGetLease differ at %d", i)
				}
				v.Release()

				v, err = c.HMGetLease(ctx, pre+"h", fields...)
				require.NoError(t, err)
				requireElems(t, want, v, "HMGetLease")
				v.Release()

				// A missing hash: every field is null.
				v, err = c.HMGetLease(ctx, pre+"no-hash", "a", "b")
				require.NoError(t, err)
				requireElems(t, []string{"<nil>", "<nil>"}, v, "HMGetLease of a missing hash")
				v.Release()

				v, err = c.LRangeLease(ctx, pre+"l", 0, -1)
				require.NoError(t, err)
				requireElems(t, list, v, "LRangeLease")
				v.Release()
				v, err = c.LRangeLease(ctx, pre+"l", 1, 2)
				require.NoError(t, err)
				requireElems(t, list[1:3], v, "LRangeLease 1 2")
				v.Release()

				// A missing list: no elements.
				v, err = c.LRangeLease(ctx, pre+"no-list", 0, -1)
				require.NoError(t, err)
				require.Zero(t, v.Len())
				v.Release()

				// MGET of a key of another type gives a null; the others
				// are errors, and no list.
				v, err = c.MGetLease(ctx, pre+"l", pre+"crlf")
				require.NoError(t, err)
				requireElems(t, []string{"<nil>", vals["crlf"]}, v, "MGetLease of a list")
				v.Release()
				v, err = c.LRangeLease(ctx, pre+"h", 0, -1)
				require.ErrorContains(t, err, "WRONGTYPE")
				require.Nil(t, v)
				v, err = c.HMGetLease(ctx, pre+"l", "f")
				require.ErrorContains(t, err, "WRONGTYPE")
				require.Nil(t, v)
			})
		}
	})
}

// requireElems checks the elements of v byte for byte; "<nil>" in want is
// a null.
func requireElems(t *testing.T, want []string, v *respire.LeaseList, what string) {
	t.Helper()
	require.Equal(t, len(want), v.Len(), what)
	for i, w := range want {
		if w == "<nil>" {
			require.True(t, v.Null(i), "%s: element %d is not null", what, i)
			require.Nil(t, v.Bytes(i), what)
			continue
		}
		require.False(t, v.Null(i), "%s: element %d is null", what, i)
		require.True(t, string(v.Bytes(i)) == w, "%s: element %d differs (%d bytes, want %d)", what, i, len(v.Bytes(i)), len(w))
	}
}

// Many callers share the pool through the multi-element forms: every
// element comes back whole whatever the interleaving (run with -race).
func TestLeaseListConcurrentCallers(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	const keys = 8
	names := make([]string, keys)
	for k := range keys {
		names[k] = fmt.Sprintf("leaselist:c%d", k)
		require.NoError(t, c.Set(ctx, names[k], strings.Repeat(string(rune('a'+k)), 300*k+1), nil))
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 100 {
				first := (g + i) % keys
				v, err := c.MGetLease(ctx, names[first:]...)
				if !assert.NoError(t, err) || !assert.Equal(t, keys-first, v.Len()) {
					return
				}
				for j := range v.Len() {
					k := first + j
					if !assert.Equal(t, strings.Repeat(string(rune('a'+k)), 300*k+1), string(v.Bytes(j))) {
						return
					}
				}
				v.Release()
			}
		})
	}
	wg.Wait()
}

// TestBatchLeaseForms checks the Lease twins of Batch and Tx: values byte
// for byte in pooled buffers, a missing key as Nil with a nil Lease, a
// wrong type as the command's own error, on every server and protocol.
func TestBatchLeaseForms(t *testing.T) {
	vals := leaseValues(t)
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: m.readMode, Protocol: m.protocol})
				ctx := ctxT(t)
				pre := "blease:" + m.name + ":"
				_, err := c.Do(ctx, "RPUSH", pre+"list", "x")
				require.NoError(t, err)
				names := make([]string, 0, len(vals))
				for name, v := range vals {
					require.NoError(t, c.Set(ctx, pre+name, v, nil))
					names = append(names, name)
				}
				run := func(t *testing.T, b interface {
					GetLease(key string) *respire.Future[*respire.Lease]
				}, exec func() error) {
					futs := make([]*respire.Future[*respire.Lease], len(names))
					for i, name := range names {
						futs[i] = b.GetLease(pre + name)
					}
					missing := b.GetLease(pre + "missing")
					wrong := b.GetLease(pre + "list")
					require.NoError(t, exec())
					for i, name := range names {
						l, err := futs[i].Result()
						require.NoError(t, err, name)
						require.True(t, string(l.Bytes()) == vals[name], "%s: bytes differ", name)
						l.Release()
					}
					l, err := missing.Result()
					assert.ErrorIs(t, err, respire.Nil)
					assert.Nil(t, l)
					l, err = wrong.Result()
					var se *respire.Error
					assert.ErrorAs(t, err, &se)
					assert.Nil(t, l)
				}
				t.Run("batch", func(t *testing.T) {
					b := c.NewBatch()
					run(t, b, func() error { return b.Exec(ctx) })
				})
				t.Run("tx", func(t *testing.T) {
					tx := c.NewTx()
					run(t, tx, func() error { return tx.Exec(ctx) })
				})
			})
		}
	})
}
