package respire

import (
	"errors"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/respire-go/respire/internal/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublicMessage(t *testing.T) {
	m := transport.Message{Channel: "news", Pattern: "n*", Payload: "hi", Sharded: true}
	got := publicMessage(&m)
	assert.Equal(t, Message{Channel: "news", Pattern: "n*", Payload: "hi", Sharded: true}, got)

	since := time.Unix(100, 0)
	cause := errors.New("connection reset")
	g := transport.Message{Channel: "s", Sharded: true, Gap: &transport.Gap{
		Reason: transport.GapMoved, Dropped: 3, Since: since, Until: since.Add(time.Second), Err: cause,
	}}
	got = publicMessage(&g)
	require.NotNil(t, got.Gap)
	assert.Equal(t, Gap{Reason: GapMoved, Dropped: 3, Since: since, Until: since.Add(time.Second), Err: cause}, *got.Gap)
	assert.Equal(t, "s", got.Channel)
	assert.True(t, got.Sharded)

	// Every field of the transport's types is carried over.
	assert.Equal(t, reflect.TypeOf(transport.Message{}).NumField(), reflect.TypeOf(Message{}).NumField())
	assert.Equal(t, reflect.TypeOf(transport.Gap{}).NumField(), reflect.TypeOf(Gap{}).NumField())

	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = publicMessage(&m) }), "a message converts without allocating")
	}
}

func TestGapReason(t *testing.T) {
	for r, want := range map[GapReason]string{GapOverflow: "overflow", GapDisconnect: "disconnect", GapMoved: "moved", 0: "unknown"} {
		assert.Equal(t, want, r.String())
	}
	// The values are the transport's: publicMessage converts them as they are.
	assert.Equal(t, GapOverflow, GapReason(transport.GapOverflow))
	assert.Equal(t, GapDisconnect, GapReason(transport.GapDisconnect))
	assert.Equal(t, GapMoved, GapReason(transport.GapMoved))
}

// TestMessageOverheadDocumented: Options.PubSubBufferBytes states what a
// buffered message counts beyond its bytes.
func TestMessageOverheadDocumented(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("documented for 64-bit platforms")
	}
	assert.Equal(t, int64(128), transport.MessageOverhead)
}
