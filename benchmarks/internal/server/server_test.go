package server

import (
	"os"
	"testing"
)

// TestStartOutsideATest starts and stops a server the way TestMain and the
// load tool do, with no testing.TB of their own.
func TestStartOutsideATest(t *testing.T) {
	s, err := Start(FlavorFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	dir := s.tb.TempDir()
	obs, err := NewObserver(s.Addr)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	a, err := obs.Counters()
	if err == nil {
		var b Counters
		b, err = obs.Counters()
		if err == nil && CommandsPerRead(a, b) != 0 {
			t.Errorf("two INFO readings give %v commands per read, want 0 (the observer's own)", CommandsPerRead(a, b))
		}
	}
	obs.Close()
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewObserver(s.Addr); err == nil {
		t.Error("server still answers after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind: %v", dir, err)
	}
}

func TestStartUnknownFlavor(t *testing.T) {
	if _, err := Start("redis-0.1"); err == nil {
		t.Fatal("Start accepted an unknown flavor")
	}
}
