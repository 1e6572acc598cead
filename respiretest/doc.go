// Package respiretest starts a throwaway Redis or Valkey server for a test
// and hands back a *respire.Client connected to it, so that code using
// Respire is tested against a real server rather than a mock:
//
//	func TestCounter(t *testing.T) {
//		c, _ := respiretest.Start(t, nil)
//		n, err := c.Incr(context.Background(), "counter")
//		...
//	}
//
// The server is found, in order:
//
//  1. Options.Server, the path of a redis-server or valkey-server binary;
//  2. the environment variable RESPIRETEST_SERVER, the same;
//  3. redis-server, then valkey-server, on PATH;
//  4. a container of Options.Image (default DefaultImage) through Docker
//     (github.com/ory/dockertest), when a Docker engine answers at
//     DOCKER_HOST or /var/run/docker.sock, unless Options.NoDocker.
//
// When none is found the test fails (or, with Options.SkipIfUnavailable, is
// skipped) with a message saying how to install one. An explicit path that
// does not run is an error, never a silent fallback.
//
// A local server listens on a free port of 127.0.0.1, keeps nothing on disk
// (no RDB snapshots, no AOF) and writes its log in a temporary directory;
// t.Cleanup closes the client, kills the process and removes the directory,
// or removes the container. Each call starts its own server, in about
// tens of milliseconds for a local binary; for many tests in one package, StartServer
// in TestMain starts one to share, each test under its own key prefix.
//
// # Clusters and Sentinel
//
// StartCluster starts a Redis Cluster of local processes (Masters
// primaries sharing the slots, ReplicasPerMaster replicas each) and
// returns a cluster client of it; StartSentinel starts a primary, its
// replicas and the sentinels that watch it, and returns a client with
// Options.Sentinel. Both find the binary as Start does, fail (or skip)
// with the same message when there is none, never use Docker (nodes in
// containers would announce addresses nobody can reach), and kill every
// process and remove its directory at t.Cleanup. They return once the
// deployment is ready: a three-primary cluster with a replica each in
// about two seconds.
//
// Each process is a *Node, to crash with Kill, hang with Stop (SIGSTOP)
// and resume with Continue. Cluster.PrimaryOf and ReplicasOf say which
// node serves a key now; Cluster.WaitFailover and Sentinel.WaitFailover
// wait until a replica has replaced a killed or stopped primary and every
// node agrees:
//
//	c, cluster := respiretest.StartCluster(t, &respiretest.ClusterOptions{ReplicasPerMaster: 1})
//	p, _ := cluster.PrimaryOf(ctx, "cart:{7}")
//	p.Kill()
//	if err := cluster.WaitFailover(ctx, p); err != nil { ... }
//	// c's writes to cart:{7} work again after a retry
//
// NewCluster and NewSentinel start them without a test, for TestMain.
//
// Package testserver, beneath this one, holds the parts it is built on:
// running a server process, waiting until it serves, a small RESP client
// independent of Respire (to set a server up or look at it without the
// client under test), and readers of CLUSTER NODES and CLUSTER SLOTS. It
// is for tests and tools that start servers their own way.
//
// This package lives in a module of its own so that programs that only use
// Respire do not download Docker's client libraries.
//
// For unit tests that need no real server, github.com/alicebob/miniredis/v2
// (a server written in Go, run inside the test process) also works with
// Respire on RESP2 and RESP3: dial its Addr(). It implements much of the
// command set but not all of it, has no CLIENT TRACKING (a client with
// Options.ClientCache fails at Connect), no cluster and no replication,
// lets keys expire only when the test moves its clock, and its errors and
// edge cases are not always the server's. docs/testing.md in the
// repository has the details; integration tests belong on a real server.
package respiretest
