package harness

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// externalInfo is what the server at REDIS_ADDR reports.
type externalInfo struct {
	version string
	flavor  Flavor
}

// externals caches externalInfo by address: each is asked once per test
// binary.
var externals sync.Map // string -> func() (externalInfo, error)

// external returns what the server at addr reports.
func external(addr string) (externalInfo, error) {
	f, _ := externals.LoadOrStore(addr, sync.OnceValues(func() (externalInfo, error) {
		return askExternal(addr)
	}))
	return f.(func() (externalInfo, error))()
}

// askExternal connects to addr and reads its version from INFO server.
func askExternal(addr string) (externalInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := testserver.Dial(ctx, "tcp", addr, nil)
	if err != nil {
		return externalInfo{}, err
	}
	defer c.Close()
	reply, err := c.Do("INFO", "server")
	if err != nil {
		return externalInfo{}, err
	}
	info, _ := reply.(string)
	v, f := serverVersion(info)
	if v == "" {
		return externalInfo{}, fmt.Errorf("INFO server reports no version")
	}
	return externalInfo{version: v, flavor: f}, nil
}

// startExternal returns the server at REDIS_ADDR when it is set and can
// satisfy cfg: a plain configuration whose flavor is empty or matches.
// Otherwise it returns nil and a server is started locally.
func startExternal(t testing.TB, cfg Config) *Server {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" || !cfg.plain() {
		return nil
	}
	info, err := external(addr)
	if err != nil {
		t.Fatalf("harness: REDIS_ADDR=%s: %v", addr, err)
	}
	if cfg.Flavor != "" && cfg.Flavor != info.flavor {
		return nil
	}
	return &Server{
		Flavor:   info.flavor,
		Version:  info.version,
		Addr:     addr,
		Config:   cfg,
		External: true,
		t:        t,
	}
}
