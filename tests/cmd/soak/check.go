package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The checks that tell a reply from a reply meant for another command.
// Each key has one owner goroutine, which writes values that encode the key
// and a sequence number, so a value of another key, or an old value of
// this one, is seen.

// valueOf is the value of seq for key: key, seq, and a filler that depends
// on both, so that the whole value is compared byte for byte.
func valueOf(key string, seq int) string {
	fill := strings.Repeat(string(rune('a'+seq%26)), 16+(seq*7+len(key))%200)
	return key + "|" + strconv.Itoa(seq) + "|" + fill
}

// keyState is what the owner of a key knows about its value.
type keyState struct {
	key    string
	seq    int    // of the last SET sent
	lastOK int    // seq of the last SET that succeeded; -1 none
	okAt   uint64 // epoch when that SET was sent
	// maybe holds the seqs of SETs that failed: their outcome is unknown,
	// and a write held up in the network may land later still.
	maybe map[int]bool
}

func newKeyState(key string) *keyState {
	return &keyState{key: key, lastOK: -1, maybe: map[int]bool{}}
}

// next returns the seq and value of a new SET.
func (k *keyState) next() (int, string) {
	k.seq++
	return k.seq, valueOf(k.key, k.seq)
}

// setDone records a SET's outcome; epoch is the one read before it was sent.
func (k *keyState) setDone(seq int, err error, epoch uint64) {
	if err == nil {
		k.lastOK, k.okAt = seq, epoch
		return
	}
	k.maybe[seq] = true
}

// checkNil says what is wrong with a null reply; now is the current epoch.
func (k *keyState) checkNil(now uint64) string {
	if k.lastOK >= 0 && now == k.okAt {
		return fmt.Sprintf("GET %s: null, but SET %d succeeded and the server did not restart since", k.key, k.lastOK)
	}
	return ""
}

// check says what is wrong with a value read, or ""; old reports a value
// of this key that a later successful SET replaced.
func (k *keyState) check(got string) (bad string, old bool) {
	key, rest, ok1 := strings.Cut(got, "|")
	s, _, ok2 := strings.Cut(rest, "|")
	seq, err := strconv.Atoi(s)
	switch {
	case !ok1 || !ok2 || err != nil:
		return fmt.Sprintf("GET %s: %.60q is not a value of this program", k.key, got), false
	case key != k.key:
		return fmt.Sprintf("GET %s: value of key %q", k.key, key), false
	case got != valueOf(key, seq):
		return fmt.Sprintf("GET %s: value %.60q differs from what SET %d sent", k.key, got, seq), false
	case seq != k.lastOK && !k.maybe[seq]:
		return fmt.Sprintf("GET %s: value of SET %d; the last SET that succeeded is %d, and %d never failed", k.key, seq, k.lastOK, seq), true
	}
	return "", false
}

// counter is what the owner of a counter key knows about it. The counter
// starts at base, (owner+1)·1e9, so another owner's counter is out of
// range, and it only grows, until a restart empties the server.
type counter struct {
	key      string
	base     int64
	prev     int64  // last value seen
	seeded   bool   // SET to base succeeded since the last reset
	seededAt uint64 // epoch when that SET was sent
}

// check says what is wrong with an INCR reply n, or ""; now is the current
// epoch. A reply below 1e9 after a restart means the counter is gone: the
// owner seeds it again.
func (c *counter) check(n int64, now uint64) string {
	switch {
	case n > c.prev && n < c.base+1e9:
		c.prev = n
	case n < 1e9 && now != c.seededAt:
		c.seeded = false
	default:
		return fmt.Sprintf("INCR %s returned %d, after %d (range [%d, %d))", c.key, n, c.prev, c.base, c.base+1e9)
	}
	return ""
}
