package respire_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
)

// NewClient connects on first use: it fails only for options it cannot
// accept, never for an unreachable server.
func ExampleNewClient() {
	c, err := respire.NewClient(respire.Options{Addr: addr, ClientName: "billing"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pong, err := c.Ping(ctx) // the first command dials and handshakes
	fmt.Println(pong, err)
	// Output: PONG <nil>
}

// Connect dials and handshakes before it returns, so a wrong address or
// password shows at start-up rather than on the first command.
func ExampleConnect_options() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{
		Addr:         addr,
		DB:           2,
		Protocol:     3, // refuse to fall back to RESP2
		Connections:  2, // multiplexed connections; one key always uses the same
		DialTimeout:  time.Second,
		StallTimeout: 10 * time.Second,
		FailFast:     true, // while the server is down, fail with ErrUnavailable at once
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(c.Set(ctx, "ex:options", "in database 2", nil))
	// Output: <nil>
}

// Options that cannot work are refused before anything is dialed, with an
// error naming the field.
func ExampleErrInvalidOption() {
	_, err := respire.NewClient(respire.Options{Addr: addr, Protocol: 4})
	fmt.Println(errors.Is(err, respire.ErrInvalidOption))
	fmt.Println(err)
	// Output:
	// true
	// respire: invalid option: Protocol: 4 is not 2 or 3
}

// A URL with several hosts names the nodes of a cluster to start from.
func ExampleParseURL_cluster() {
	opts, err := respire.ParseURL("redis://10.0.0.1:7000,10.0.0.2:7000?read_from=prefer_replica")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts.Cluster.Addrs, opts.ReadFrom == respire.ReadPreferReplica)
	// Output: [10.0.0.1:7000 10.0.0.2:7000] true
}

// A Unix socket path, with the database and options in the query.
func ExampleParseURL_unix() {
	opts, err := respire.ParseURL("unix:///run/redis/redis.sock?db=3&protocol=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts.Addr, opts.DB, opts.Protocol)
	// Output: /run/redis/redis.sock 3 2
}

// Errors from ParseURL never show the password.
func ExampleParseURL_error() {
	_, err := respire.ParseURL("redis://app:s3cret@cache:6379/1?db=2")
	fmt.Println(errors.Is(err, respire.ErrInvalidOption), strings.Contains(err.Error(), "s3cret"))
	// Output: true false
}

// A cluster client is the same type with the same methods; only Options
// differ. Options that contradict a cluster are refused.
func ExampleClusterOptions() {
	opts := respire.Options{
		Cluster: &respire.ClusterOptions{
			Addrs:           []string{"10.0.0.1:7000", "10.0.0.2:7000"},
			RefreshInterval: time.Minute,
		},
		ReadFrom: respire.ReadPreferReplica, // read-only commands to replicas
	}
	c, err := respire.NewClient(opts) // connects on first use
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Close()

	opts.Addr = "10.0.0.1:7000"
	_, err = respire.NewClient(opts)
	fmt.Println(err)
	// Output: respire: invalid option: Addr: "10.0.0.1:7000" given with Cluster: list the nodes to start from in Cluster.Addrs
}
