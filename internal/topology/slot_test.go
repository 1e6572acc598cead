package topology

import "testing"

func TestSlot(t *testing.T) {
	// Reference values: CRC16-XMODEM("123456789") is 0x31C3, and the
	// values CLUSTER KEYSLOT gives for these keys.
	cases := map[string]uint16{
		"123456789":            0x31C3 & (SlotCount - 1),
		"foo":                  12182,
		"bar":                  5061,
		"{user1000}.following": Slot("user1000"),
		"{user1000}.followers": Slot("user1000"),
		"foo{}{bar}":           Slot("foo{}{bar}"), // empty first tag: the whole key
		"foo{{bar}}zap":        Slot("{bar"),
		"foo{bar}{zap}":        Slot("bar"),
		"":                     0,
	}
	for k, want := range cases {
		if got := Slot(k); got != want {
			t.Errorf("Slot(%q) = %d, want %d", k, got, want)
		}
	}
	if Slot("foo{}{bar}") == Slot("bar") {
		t.Error("an empty tag must not make the next one count")
	}
}

func TestSlotAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Slot("{tag}key") }); n != 0 {
		t.Fatalf("Slot allocates %v times", n)
	}
}
