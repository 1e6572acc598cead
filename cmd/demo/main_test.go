package main

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestDemo runs the demo end to end against its own throwaway server, so
// that the README's first command keeps working.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	if os.Getenv("RESPIRE_DEMO_SERVER") == "" {
		if p, err := filepath.Abs("../../.servers/bin/redis-8.0-server"); err == nil {
			if _, err := os.Stat(p); err == nil {
				t.Setenv("RESPIRE_DEMO_SERVER", p)
			}
		}
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
