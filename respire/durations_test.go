package respire

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sent returns the words a command's argument encoder puts in the
// command's buffer (its name included), and the argument error it
// recorded.
func sent(t *testing.T, info *cmdInfo, build func(x *cmd)) (string, error) {
	t.Helper()
	x := newCmd(info)
	defer x.Recycle()
	build(x)
	b := x.buf[hdrRoom:]
	var words []string
	for len(b) > 0 {
		require.Equal(t, byte('$'), b[0], "a bulk string")
		i := bytes.Index(b, []byte("\r\n"))
		n, err := strconv.Atoi(string(b[1:i]))
		require.NoError(t, err)
		words = append(words, string(b[i+2:i+2+n]))
		b = b[i+2+n+2:]
	}
	return strings.Join(words, " "), x.argErr
}

// A duration is never refused for its precision: a fraction of the unit
// rounds away from zero, so that no non-zero duration is sent as 0, and
// SET's EX that is not whole seconds goes as PX.
func TestDurationArguments(t *testing.T) {
	set := func(o SetOptions) func(*cmd) { return func(x *cmd) { argsSet(x, "k", "v", &o) } }
	cases := []struct {
		name string
		info *cmdInfo
		fn   func(*cmd)
		want string
	}{
		{"EX whole seconds", &cmdSET, set(SetOptions{EX: 2 * time.Second}), "SET k v EX 2"},
		{"EX with a fraction goes as PX", &cmdSET, set(SetOptions{EX: 1500 * time.Millisecond}), "SET k v PX 1500"},
		{"EX below a millisecond is PX 1", &cmdSET, set(SetOptions{EX: time.Microsecond}), "SET k v PX 1"},
		{"PX rounds up", &cmdSET, set(SetOptions{PX: 1500 * time.Microsecond}), "SET k v PX 2"},
		{"PX of 1ns is 1", &cmdSET, set(SetOptions{PX: 1}), "SET k v PX 1"},
		{"negative EX is kept", &cmdSET, set(SetOptions{EX: -2 * time.Second}), "SET k v EX -2"},
		{"negative fraction rounds away from 0", &cmdSET, set(SetOptions{EX: -1500 * time.Microsecond}), "SET k v PX -2"},
		{"GETEX", &cmdGETEX, func(x *cmd) { argsGetEx(x, "k", &GetExOptions{EX: 2500 * time.Millisecond}) }, "GETEX k PX 2500"},
		{"EXPIRE whole seconds", &cmdEXPIRE, func(x *cmd) { argsExpire(x, "k", 3*time.Second, nil) }, "EXPIRE k 3"},
		{"EXPIRE with a fraction goes as PEXPIRE", &cmdEXPIRE, func(x *cmd) { argsExpire(x, "k", 2500*time.Millisecond, &ExpireOptions{Condition: "NX"}) }, "PEXPIRE k 2500 NX"},
		{"EXPIRE of 1ns is PEXPIRE 1", &cmdEXPIRE, func(x *cmd) { argsExpire(x, "k", 1, nil) }, "PEXPIRE k 1"},
		{"EXPIRE negative", &cmdEXPIRE, func(x *cmd) { argsExpire(x, "k", -1500*time.Millisecond, nil) }, "PEXPIRE k -1500"},
		{"HEXPIRE with a fraction goes as HPEXPIRE", &cmdHEXPIRE, func(x *cmd) { argsHExpire(x, "h", 1500*time.Millisecond, []string{"f"}, nil) }, "HPEXPIRE h 1500 FIELDS 1 f"},
		{"SETEX with a fraction goes as PSETEX", &cmdSETEX, func(x *cmd) { argsSetEx(x, "k", 1500*time.Millisecond, "v") }, "PSETEX k 1500 v"},
		{"PEXPIRE", &cmdPEXPIRE, func(x *cmd) { argsPExpire(x, "k", time.Microsecond, nil) }, "PEXPIRE k 1"},
		{"SETEX", &cmdSETEX, func(x *cmd) { argsSetEx(x, "k", 2*time.Second, "v") }, "SETEX k 2 v"},
		{"BLPOP in seconds", &cmdBLPOP, func(x *cmd) { argsBLPop(x, 1500*time.Millisecond, []string{"k"}) }, "BLPOP k 1.5"},
		{"BLPOP below a millisecond", &cmdBLPOP, func(x *cmd) { argsBLPop(x, time.Microsecond, []string{"k"}) }, "BLPOP k 0.001"},
		{"BLPOP 0 blocks", &cmdBLPOP, func(x *cmd) { argsBLPop(x, 0, []string{"k"}) }, "BLPOP k 0"},
		{"XREAD BLOCK", &cmdXREAD, func(x *cmd) {
			argsXRead(x, []string{"s"}, []string{"$"}, &XReadOptions{Block: ptrTo(time.Microsecond)})
		}, "XREAD BLOCK 1 STREAMS s $"},
		{"WAITAOF in milliseconds", &cmdWAITAOF, func(x *cmd) { argsWaitAOF(x, 1, 0, 1500*time.Microsecond) }, "WAITAOF 1 0 2"},
		{"CLIENT PAUSE", &cmdCLIENT_PAUSE, func(x *cmd) { argsClientPause(x, time.Second, nil) }, "CLIENT PAUSE 1000"},
	}
	for _, tc := range cases {
		got, err := sent(t, tc.info, tc.fn)
		assert.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}

	// A negative blocking timeout is refused before anything is sent.
	_, err := sent(t, &cmdBLPOP, func(x *cmd) { argsBLPop(x, -time.Millisecond, []string{"k"}) })
	var ae *ArgError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, "timeout", ae.Argument)
	assert.Contains(t, err.Error(), "negative timeout -1ms")
}

func ptrTo[T any](v T) *T { return &v }

// inUnits rounds away from zero: the result covers d and is 0 only for 0.
func TestInUnits(t *testing.T) {
	for _, u := range []time.Duration{time.Millisecond, time.Second} {
		for _, d := range []time.Duration{0, 1, -1, u - 1, u, u + 1, 3 * u / 2, -3 * u / 2, 1<<62 + 1, -(1<<62 + 1)} {
			n := inUnits(d, u)
			abs, nabs := d, time.Duration(n)
			if d < 0 {
				abs, nabs = -d, -nabs
			}
			assert.Equal(t, d == 0, n == 0, "%v in %v: %d", d, u, n)
			assert.Equal(t, d < 0, n < 0, "%v in %v keeps its sign", d, u)
			assert.GreaterOrEqual(t, float64(nabs)*float64(u), float64(abs), "%v in %v: %d covers it", d, u, n)
			assert.Less(t, float64(nabs-1)*float64(u), float64(abs), "%v in %v: %d is the least", d, u, n)
		}
	}
}

// Do takes a time.Duration in milliseconds, rounded up like the generated
// methods' durations, in its arguments and in map values alike.
func TestDoDurationRoundsUp(t *testing.T) {
	got, err := sent(t, &cmdDo, func(x *cmd) {
		x.argAny("SET", "arg", "PX")
		x.argAny("SET", "arg", 1500*time.Microsecond)
		x.argAny("SET", "arg", time.Nanosecond)
	})
	require.NoError(t, err)
	assert.Equal(t, "PX 2 1", got)
	s, ok := anyText(1500 * time.Microsecond)
	assert.True(t, ok)
	assert.Equal(t, "2", s)
}

// TestRenameKeepsReferencedArguments: a command turned into its twin keeps
// a large argument that is referenced, not copied, in its place.
func TestRenameKeepsReferencedArguments(t *testing.T) {
	key := strings.Repeat("k", 70<<10)
	x := newCmd(&cmdEXPIRE)
	defer x.Recycle()
	argsExpire(x, key, 1500*time.Millisecond, nil)
	require.Len(t, x.refs, 1, "the key is referenced")
	assert.Equal(t, &cmdPEXPIRE, x.info)
	head := "$7\r\nPEXPIRE\r\n$" + strconv.Itoa(len(key)) + "\r\n"
	assert.Equal(t, head, string(x.buf[hdrRoom:x.refs[0].At]))
	assert.Equal(t, "\r\n$4\r\n1500\r\n", string(x.buf[x.refs[0].At:]))
}
