package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/gen/spec"
)

func TestRunSpecArguments(t *testing.T) {
	assert.ErrorContains(t, runSpec(nil), "--addr")
	assert.ErrorContains(t, runSpec([]string{"--addr", "127.0.0.1:1", "extra"}), "unexpected")

	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	out := filepath.Join(t.TempDir(), "commands.json")
	assert.ErrorContains(t, runSpec([]string{"--addr", addr, "--out", out}), addr)
	assert.NoFileExists(t, out)
}

// TestRunSpecLive writes a spec from a real server when RESPIRE_SPEC_ADDR
// (host:port) is set, twice, and expects identical files.
func TestRunSpecLive(t *testing.T) {
	addr := os.Getenv("RESPIRE_SPEC_ADDR")
	if addr == "" {
		t.Skip("RESPIRE_SPEC_ADDR not set")
	}
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.json"), filepath.Join(dir, "two.json")
	require.NoError(t, runSpec([]string{"--addr", addr, "--out", one}))
	require.NoError(t, runSpec([]string{"--addr", addr, "--out", two}))
	a, err := os.ReadFile(one)
	require.NoError(t, err)
	b, err := os.ReadFile(two)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	s, err := spec.Load(one)
	require.NoError(t, err)
	assert.NotNil(t, s.Lookup("GET"))
}
