package cancelstorm

import (
	"context"
	"errors"
	"testing"
)

// fakeNotSent stands for a client's not-sent error.
var fakeNotSent = errors.New("not sent")

type notSentOnly struct{ Client }

func (notSentOnly) NotSent(err error) bool { return errors.Is(err, fakeNotSent) }

func TestValueParse(t *testing.T) {
	for _, size := range []int{0, 10, smallValue, largeValue} {
		v := value("p{1}:k0", 42, size)
		k, seq, ok := parse(v)
		if !ok || k != "p{1}:k0" || seq != 42 {
			t.Fatalf("size %d: parse = %q %d %v", size, k, seq, ok)
		}
		if size > 40 && len(v) != size {
			t.Fatalf("size %d: len %d", size, len(v))
		}
	}
	v := value("p{1}:k0", 42, smallValue)
	if _, _, ok := parse(v[:len(v)-1]); ok {
		t.Fatal("a truncated value parsed")
	}
	if _, _, ok := parse(v[:len(v)-1] + "x"); ok {
		t.Fatal("a value with the wrong filler parsed")
	}
}

// TestKeyAccounting: what each read of a key is judged to be.
func TestKeyAccounting(t *testing.T) {
	c := notSentOnly{}
	newKey := func() *key {
		return &key{name: "k", unknown: map[int64]bool{}, wasUnk: map[int64]bool{}, notSent: map[int64]bool{}, how: map[int64]string{}}
	}
	read := func(k *key, seq int64) map[string]int {
		r := &Result{Wrong: map[string][]string{}, NWrong: map[string]int{}}
		k.read(r, "GET", value(k.name, seq, smallValue))
		return r.NWrong
	}
	unknown := context.Canceled

	k := newKey()
	k.wrote(c, "SET", 1, nil)
	k.wrote(c, "SET", 2, unknown)
	k.wrote(c, "SET", 3, fakeNotSent)
	if w := read(k, 1); len(w) != 0 {
		t.Fatalf("the acknowledged write: %v", w)
	}
	if w := read(k, 2); len(w) != 0 || k.acked != 2 {
		t.Fatalf("a later write of unknown outcome: %v, acked %d", w, k.acked)
	}
	if w := read(k, 3); w[NotSentRan] != 1 {
		t.Fatalf("a not-sent write: %v", w)
	}
	if w := read(k, 1); w[WrongValue] != 1 {
		t.Fatalf("an older acknowledged write: %v", w)
	}

	k = newKey()
	k.wrote(c, "SET", 1, unknown)
	k.wrote(c, "SET", 2, nil)
	if w := read(k, 1); w[LateWrite] != 1 || k.acked != 1 {
		t.Fatalf("a write of unknown outcome after a later acknowledged one: %v, acked %d", w, k.acked)
	}
	if w := read(k, 1); len(w) != 0 {
		t.Fatalf("the same late write read again: %v", w)
	}
	r := &Result{Wrong: map[string][]string{}, NWrong: map[string]int{}}
	k.read(r, "GET", value("other", 1, smallValue))
	if r.NWrong[WrongValue] != 1 {
		t.Fatalf("another key's value: %v", r.NWrong)
	}
}
