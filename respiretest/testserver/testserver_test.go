package testserver

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serverBin returns the repository's Redis 8.0 (make servers), under
// $RESPIRE_SERVERS_DIR/bin when that is set.
func serverBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RESPIRE_SERVERS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".servers")
	}
	p, err := filepath.Abs(filepath.Join(dir, "bin", "redis-8.0-server"))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run make servers at the repository root (%v)", p, err)
	}
	return p
}

// start runs a server with args on a free port and waits until it
// serves; it is killed when the test ends.
func start(t *testing.T, args ...string) (*Process, string) {
	t.Helper()
	port, err := FreePort()
	require.NoError(t, err)
	dir := t.TempDir()
	args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--logfile", filepath.Join(dir, "server.log")}, args...)
	p, err := run(serverBin(t), dir, args)
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, WaitReady(ctx, Probe{Addr: addr, Password: "pw"}, p.exited()))
	return p, addr
}

// TestConn: replies of every RESP2 type, an error reply, a pipeline
// with an error in its midst, and a password the probe gets through.
func TestConn(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, addr := start(t, "--requirepass", "pw")
	_, err := Do(ctx, addr, "GET", "k")
	var se ServerError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "GET k on "+addr)

	c, err := Dial(ctx, "tcp", addr, nil)
	require.NoError(t, err)
	defer c.Close()
	reply, err := c.Do("AUTH", "pw")
	require.NoError(t, err)
	assert.Equal(t, "OK", reply)
	replies, err := c.Pipeline([][]string{
		{"SET", "k", "v\r\nw"}, {"GET", "k"}, {"GET", "missing"}, {"INCR", "k"},
		{"RPUSH", "l", "a", "b"}, {"LRANGE", "l", "0", "-1"}, {"BLPOP", "none", "0.01"},
	})
	require.NoError(t, err)
	assert.Equal(t, "OK", replies[0])
	assert.Equal(t, "v\r\nw", replies[1])
	assert.Nil(t, replies[2])
	require.IsType(t, ServerError(""), replies[3])
	assert.Equal(t, int64(2), replies[4])
	assert.Equal(t, []any{"a", "b"}, replies[5])
	assert.Nil(t, replies[6])
}

// TestProcess: Pause leaves a server silent until Resume, Kill ends it,
// and neither signal reaches a process that has ended.
func TestProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGSTOP")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	p, addr := start(t)
	require.NoError(t, p.Pause())
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Do(short, addr, "PING")
	require.Error(t, err, "a paused server answered")
	require.NoError(t, p.Resume())
	reply, err := Do(ctx, addr, "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)

	assert.True(t, p.Running())
	p.Kill()
	assert.False(t, p.Running())
	assert.ErrorIs(t, p.Pause(), errExited)
	p.Kill() // again: nothing
}

// TestLaunchFails: a server that cannot start ends the wait at once,
// and the error says why: its complaint, and whether its port was taken.
func TestLaunchFails(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	_, err := Launch(ctx, serverBin(t), dir, []string{"--no-such-directive", "1"}, Probe{Addr: "127.0.0.1:1"}, "")
	require.ErrorContains(t, err, "exited during startup")
	assert.ErrorContains(t, err, "no-such-directive")
	assert.NotErrorIs(t, err, ErrPortInUse)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_, err = Launch(ctx, serverBin(t), dir, []string{"--port", port, "--bind", "127.0.0.1", "--save", ""},
		Probe{Addr: l.Addr().String()}, "")
	assert.ErrorIs(t, err, ErrPortInUse)
}

// TestTerminate: SIGTERM ends a server gracefully.
func TestTerminate(t *testing.T) {
	t.Parallel()
	p, _ := start(t)
	p.Terminate(10 * time.Second)
	assert.False(t, p.Running())
}

func TestPoll(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	n := 0
	require.NoError(t, Poll(ctx, "three tries", func(context.Context) error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	}))
	cause := errors.New("hopeless")
	err := Poll(ctx, "nothing", func(context.Context) error { return Permanent(cause) })
	assert.ErrorIs(t, err, cause)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = Poll(short, "never", func(context.Context) error { return errors.New("no") })
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "waiting for never")
}

// TestKeySlot: the slots of keys, as CLUSTER KEYSLOT gives them.
func TestKeySlot(t *testing.T) {
	// CRC-16/XMODEM's check value.
	assert.Equal(t, uint16(0x31C3), crc16("123456789"))
	slot := func(s string) int { return int(crc16(s)) % SlotCount }
	for key, want := range map[string]int{
		"":                     0,
		"foo":                  12182,
		"bar":                  5061,
		"123456789":            0x31C3,
		"{foo}bar":             12182,
		"x{foo}":               12182,
		"{foo}{bar}":           12182, // only the first tag counts
		"{user1000}.following": slot("user1000"),
		"{}foo":                slot("{}foo"),
		"a{b}}":                slot("b"),
		"{{foo}}":              slot("{foo"),
		"foo{}{bar}":           slot("foo{}{bar}"), // empty first tag: the whole key
		"{a":                   slot("{a"),
		"a}b{":                 slot("a}b{"),
		"a{}b{c}":              slot("a{}b{c}"),
	} {
		assert.Equal(t, want, KeySlot(key), "KeySlot(%q)", key)
	}
}

func TestParseClusterNodes(t *testing.T) {
	lines := parseClusterNodes("" +
		"a1 127.0.0.1:7000@17000,host1 myself,master - 0 0 3 connected 0-5460 5462 [5463->-b2]\n" +
		"b2 127.0.0.1:7001@17001 slave a1 0 0 3 connected\n" +
		"short line\n")
	require.Len(t, lines, 2)
	a, b := lines[0], lines[1]
	assert.Equal(t, "127.0.0.1:7000", a.Addr)
	assert.True(t, a.IsPrimary() && a.Flags["myself"])
	assert.Equal(t, int64(3), a.Epoch)
	assert.Equal(t, [][2]int{{0, 5460}, {5462, 5462}}, a.Slots)
	assert.True(t, a.Owns(5462) && !a.Owns(5461) && !a.Owns(5463))
	assert.True(t, b.IsReplica())
	assert.Equal(t, "a1", b.Primary)
}

func TestParseClusterSlots(t *testing.T) {
	node := func(id string) []any { return []any{"127.0.0.1", int64(7000), id} }
	m, err := parseClusterSlots([]any{
		[]any{int64(100), int64(16383), node("b"), node("z"), node("y")},
		[]any{int64(0), int64(99), node("a")},
	})
	require.NoError(t, err)
	assert.Equal(t, "0-99:a 100-16383:b,y,z", m.Canonical)
	assert.Equal(t, []string{"y", "z"}, m.Shards["b"])
	assert.Equal(t, SlotCount, m.Covered())
	_, err = parseClusterSlots("no")
	assert.Error(t, err)
	_, err = parseClusterSlots([]any{[]any{"x", int64(1), node("a")}})
	assert.Error(t, err)
}
