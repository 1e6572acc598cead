package respiretest_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respiretest"
)

// Start in a test: a server of its own, a client connected to it, both
// gone when the test ends.
func ExampleStart() {
	testCounter := func(t *testing.T) {
		c, srv := respiretest.Start(t, &respiretest.Options{
			Client: respire.Options{Protocol: 2},
		})
		t.Logf("server at %s", srv.Addr)
		ctx := context.Background()
		if _, err := c.Incr(ctx, "visits"); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Incr(ctx, "visits"); err != nil || n != 2 {
			t.Fatalf("visits = %d, %v; want 2", n, err)
		}
	}
	_ = testCounter // func TestCounter(t *testing.T) { ... } in a _test.go file
}

// StartServer in TestMain: one server for the package's tests, each
// under a key prefix of its own.
func ExampleStartServer() {
	var shared *respiretest.Server
	testMain := func(m *testing.M) {
		var err error
		shared, err = respiretest.StartServer(context.Background(), &respiretest.Options{
			Server: os.Getenv("REDIS_SERVER"), // "" finds one on PATH, else Docker
		})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		code := m.Run()
		shared.Close()
		os.Exit(code)
	}
	_ = testMain // func TestMain(m *testing.M) { ... }, with tests that call shared.Connect(t, respire.Options{})
}
