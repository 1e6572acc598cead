package respire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRefuseAlone: WAIT and WAITAOF are recognised by their typed
// methods' description and by Do's first word in any case; nothing else
// is refused, and the error says nothing was sent.
func TestRefuseAlone(t *testing.T) {
	for _, tc := range []struct {
		info *cmdInfo
		raw  string
		want string
	}{
		{&cmdWAIT, "", "WAIT"},
		{&cmdWAITAOF, "", "WAITAOF"},
		{&cmdDoBlocking, "wait", "WAIT"},
		{&cmdDoBlocking, "WaitAof", "WAITAOF"},
		{&cmdDoBlocking, "WAITS", ""},
		{&cmdDoBlocking, "BLPOP", ""},
		{&cmdGET, "", ""},
		{&cmdDo, "waitaofx", ""},
	} {
		x := newCmd(tc.info)
		x.rawName = tc.raw
		err := refuseAlone(x)
		if tc.want == "" {
			assert.NoError(t, err, "%s %q", tc.info.name, tc.raw)
			continue
		}
		var ae *ArgError
		if assert.True(t, errors.As(err, &ae), "%s %q", tc.info.name, tc.raw) {
			assert.Equal(t, tc.want, ae.Command)
			assert.Contains(t, ae.Reason, "Batch.Wait")
		}
		assert.ErrorIs(t, err, ErrNotSent)
	}
}
