package respire

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/transport/resp"
)

// withLeaseChecks sets leaseChecks for the test.
func withLeaseChecks(t *testing.T, on bool) {
	prev := leaseChecks
	leaseChecks = on
	t.Cleanup(func() { leaseChecks = prev })
}

func TestLeaseClasses(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 0, 64: 0, 65: 1, 128: 1, 1000: 4, 1 << 20: 14, 1<<20 + 1: 15, 4 << 20: 16, 4<<20 + 1: -1} {
		assert.Equal(t, want, leaseClass(n), "n=%d", n)
	}
	for _, n := range []int{0, 1, 100, 4096, 1 << 20, 5 << 20} {
		l := getLease(n)
		assert.GreaterOrEqual(t, cap(l.b), n)
		if n > 64 {
			assert.Less(t, cap(l.b), 2*n, "a buffer at most twice the value")
		}
		assert.Zero(t, l.Len())
		l.Release()
	}
}

func TestLeaseDecoders(t *testing.T) {
	for s, want := range map[string]string{
		"$3|abc|": "abc", "+abc|": "abc", "=7|txt:abc|": "abc", ":-42|": "-42", ",1.5|": "1.5",
		"(12345678901234567890|": "12345678901234567890", "$0||": "",
		"$6|a\r\nb\r\n|": "a\r\nb\r\n",
	} {
		for _, dec := range []decoder{decLease, decLeaseNull} {
			var r result
			require.NoError(t, dec(msg(t, s), &r), s)
			l := r.Any.(*Lease)
			assert.Equal(t, want, string(l.Bytes()), s)
			assert.Equal(t, len(want), l.Len())
			l.Release()
		}
	}
	// An attribute in front of the value is skipped.
	rd := resp.NewReader(strings.NewReader("|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n"), resp.Limits{})
	m, err := rd.Next()
	require.NoError(t, err)
	var ra result
	require.NoError(t, decLeaseNull(m, &ra))
	assert.Equal(t, "v", ra.Any.(*Lease).String())

	for _, s := range []string{"$-1|", "_|", "*-1|"} {
		var r result
		assert.ErrorIs(t, decLeaseNull(msg(t, s), &r), Nil, s)
		assert.Nil(t, r.Any)
		var u *UnexpectedReplyError
		assert.ErrorAs(t, decLease(msg(t, s), &r), &u, "a null where str is required: %s", s)
	}
	var r result
	var u *UnexpectedReplyError
	require.ErrorAs(t, decLeaseNull(msg(t, "*1|:1|"), &r), &u)
	assert.Contains(t, u.Error(), "a string")
	assert.Nil(t, r.Any)
}

// The decoder copies: the lease keeps its bytes when the read buffer is
// reused.
func TestLeaseCopiesBytes(t *testing.T) {
	m := msg(t, "$5|hello|")
	var r result
	require.NoError(t, decLease(m, &r))
	copy(m[0].Data, "XXXXX")
	l := r.Any.(*Lease)
	assert.Equal(t, "hello", l.String())
	l.Release()
}

func TestNilLease(t *testing.T) {
	var l *Lease
	assert.Nil(t, l.Bytes())
	assert.Zero(t, l.Len())
	assert.Empty(t, l.String())
	assert.NotPanics(t, l.Release)
}

func TestLeaseMisuseIgnoredWithoutChecks(t *testing.T) {
	withLeaseChecks(t, false)
	l := getLease(10)
	l.b = append(l.b, "0123456789"...)
	l.Release()
	assert.NotPanics(t, l.Release, "a second Release is ignored")
	assert.Nil(t, l.Bytes(), "no bytes after Release")
	assert.Zero(t, l.Len())
	// Released twice, pooled once: two leases taken now are distinct.
	a, b := getLease(10), getLease(10)
	assert.NotSame(t, a, b)
	assert.NotSame(t, &a.b[:1][0], &b.b[:1][0])
	a.Release()
	b.Release()
}

func TestLeaseMisuseDetected(t *testing.T) {
	withLeaseChecks(t, true)
	l := getLease(3)
	l.b = append(l.b, "abc"...)
	_, file, line, _ := runtime.Caller(0)
	l.Release()
	at := file + ":" + strconv.Itoa(line+1)
	assert.PanicsWithValue(t, "respire: Lease.Release called twice (released at "+at+")", l.Release)
	for name, use := range map[string]func(){
		"Bytes": func() { l.Bytes() }, "Len": func() { l.Len() }, "String": func() { _ = l.String() },
	} {
		assert.Panics(t, use, name)
		func() {
			defer func() {
				msg, _ := recover().(string)
				assert.Equal(t, "respire: Lease.Bytes called after Release (released at "+at+")", msg, name)
			}()
			use()
		}()
	}
	// The buffer serves again, under another Lease; the stale one stays
	// caught.
	again := getLease(3)
	assert.NotSame(t, l, again)
	assert.Panics(t, l.Release)
	again.Release()
	assert.Panics(t, again.Release)
}

func TestLeaseConcurrentRelease(t *testing.T) {
	withLeaseChecks(t, false)
	l := getLease(8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(l.Release)
	}
	wg.Wait()
	a, b := getLease(8), getLease(8)
	assert.NotSame(t, a, b, "pooled once")
	a.Release()
	b.Release()
}

func TestLeaseAllocs(t *testing.T) {
	if raceEnabled || leaseChecks {
		t.Skip("allocation counts are not meaningful under the race detector or with lease checks")
	}
	m := msg(t, "$1024|"+strings.Repeat("v", 1024)+"|")
	dst := make([]byte, 0, 2048)
	allocs := testing.AllocsPerRun(1000, func() {
		var r result
		if err := decLeaseNull(m, &r); err != nil {
			t.Fatal(err)
		}
		l := r.Any.(*Lease)
		dst = append(dst[:0], l.Bytes()...)
		l.Release()
	})
	assert.Zero(t, allocs)
	assert.Equal(t, strings.Repeat("v", 1024), string(dst))
}

// A caller whose context ends before its reply arrives gets dst back
// untouched, and the late reply, decoded after the caller left, never
// writes into it (the race detector watches the test's writes to dst).
func TestAppendAbandonedCallerBufferUntouched(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := newFakeTracker(t, func(n int64, key string) string {
		if n == 1 {
			close(started)
			<-release
		}
		return "$5\r\nvalue\r\n"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Options{Addr: srv.Addr()})
	require.NoError(t, err)
	defer c.Close()

	dst := append(make([]byte, 0, 64), "keep:"...)
	short, stop := context.WithCancel(ctx)
	go func() {
		<-started // the GET is in flight: the server holds its reply
		stop()
	}()
	got, err := c.GetAppend(short, dst, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, "keep:", string(got))

	close(release) // the late reply is decoded now, after the caller left
	full := dst[:cap(dst)]
	for i := len(dst); i < len(full); i++ {
		full[i] = '#'
	}
	// The second GET's reply follows the first's on the connection: once
	// it is in, the first was handled.
	v, err := c.GetAppend(ctx, nil, "k")
	require.NoError(t, err)
	assert.Equal(t, "value", string(v))
	assert.Equal(t, "keep:"+strings.Repeat("#", cap(dst)-5), string(full))
}

func TestLeaseAndAppendAgainstFakeServer(t *testing.T) {
	val := "a\r\nb\x00" + strings.Repeat("z", 5000)
	srv := newFakeTracker(t, func(n int64, key string) string {
		if key == "missing" {
			return "_\r\n"
		}
		return "$" + strconv.Itoa(len(val)) + "\r\n" + val + "\r\n"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, Options{Addr: srv.Addr()})
	require.NoError(t, err)
	defer c.Close()

	l, err := c.GetLease(ctx, "k")
	require.NoError(t, err)
	assert.True(t, bytes.Equal([]byte(val), l.Bytes()))
	l.Release()

	l, err = c.GetLease(ctx, "missing")
	assert.True(t, errors.Is(err, Nil))
	assert.Nil(t, l)

	dst := []byte("prefix:")
	dst, err = c.GetAppend(ctx, dst, "k")
	require.NoError(t, err)
	assert.Equal(t, "prefix:"+val, string(dst))
	out, err := c.GetAppend(ctx, dst, "missing")
	assert.ErrorIs(t, err, Nil)
	assert.Equal(t, "prefix:"+val, string(out))
}
