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
	if os.Getenv("RESPIRE_SERVERS_DIR") == "" {
		t.Setenv("RESPIRE_SERVERS_DIR", filepath.Join("..", "..", ".servers"))
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
