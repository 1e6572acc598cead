package respire_test

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/respire-go/respire/respire"
)

// tokenSource stands for a cache of short-lived tokens (cloud IAM, Entra
// ID, ...) that something refreshes in the background.
type tokenSource struct {
	mu   sync.Mutex
	user string
	tok  string
}

func (s *tokenSource) credentials(context.Context) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user, s.tok, nil
}

// Credentials gives each new connection the current token; after a
// refresh, Reauthenticate sends it on the live connections, behind the
// commands in flight.
func ExampleClient_Reauthenticate() {
	ctx := context.Background()
	tokens := &tokenSource{} // the default user, no password on the example server
	c, err := respire.Connect(ctx, respire.Options{Addr: addr, Credentials: tokens.credentials})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// The token was refreshed (here: the same one, which the server
	// accepts): bring every live connection up to date.
	fmt.Println(c.Reauthenticate(ctx))
	// Output: <nil>
}

// Dialer opens every connection the client makes, for a proxy or a custom
// transport; OnConnect runs set-up commands on each of them before the
// client uses it.
func ExampleOptions_dialer() {
	ctx := context.Background()
	var mu sync.Mutex
	dialed := 0
	var d net.Dialer
	c, err := respire.Connect(ctx, respire.Options{
		Addr: addr,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed++
			mu.Unlock()
			return d.DialContext(ctx, network, addr)
		},
		OnConnect: func(ctx context.Context, conn *respire.SetupConn) error {
			_, err := conn.Do(ctx, "CLIENT", "SETNAME", "example-setup")
			return err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	name, err := c.Do(ctx, "CLIENT", "GETNAME")
	fmt.Println(name, err)
	mu.Lock()
	fmt.Println(dialed > 0)
	mu.Unlock()
	// Output:
	// example-setup <nil>
	// true
}
