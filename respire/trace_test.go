package respire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCommandArgs: the words a tracer reads are those encoded, binary
// bytes and CRLF inside a value included.
func TestCommandArgs(t *testing.T) {
	x := newCmd(&cmdSET)
	x.argKey("k")
	x.argBytes([]byte("a\r\nb\x00"))
	x.argInt(-12)
	x.argFloat(2.5)
	a := commandStart(x, "SET").Args
	assert.Equal(t, 5, a.Len())
	assert.Equal(t, []string{"SET", "k", "a\r\nb\x00", "-12", "2.5"}, a.Strings())
	assert.Equal(t, "SET k a\r\nb\x00 -12 2.5", a.String())
	x.Recycle()
	assert.Empty(t, CommandArgs{}.Strings())
}
