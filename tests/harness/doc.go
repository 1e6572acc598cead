// Package harness starts real Redis and Valkey servers for integration tests.
//
// Start launches one server process per call on a free loopback port, in the
// test's own temporary directory, waits until it answers PING and stops it when
// the test ends:
//
//	func TestGet(t *testing.T) {
//		harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
//			srv := harness.Start(t, harness.Config{Flavor: f})
//			// dial srv.Addr ...
//		})
//	}
//
// Config asks for TLS, a password, ACL users, a unix socket or any other
// server directive. Kill, Stop and Restart let fault tests take the server
// down and bring it back on the same address.
//
// # Where the servers come from
//
// For each Flavor the harness looks, in order, at
//
//  1. the environment variable RESPIRE_SERVER_<FLAVOR> (for example
//     RESPIRE_SERVER_REDIS_8_0), naming an executable;
//  2. .servers/bin/<flavor>-server at the repository root (or under the
//     directory RESPIRE_SERVERS_DIR names), which `make servers` installs;
//  3. for Redis 7.0 only, redis-server on PATH.
//
// If none exists and a Docker engine is reachable, the server runs in a
// container (images redis:7.0.15, redis:8.0.2, valkey/valkey:8.1.1, redis:8.6.3,
// valkey/valkey:9.1.2).
// Otherwise the test fails with instructions; it is never skipped silently.
//
// When REDIS_ADDR is set, Start with a plain Config (no TLS, password, users,
// unix socket or extra directives) whose Flavor is empty or matches that
// server returns the server at REDIS_ADDR instead of starting one.
//
// The harness is built on github.com/respire-go/respire/respiretest/testserver,
// as package respiretest is: its processes run and are awaited with
// testserver.Launch, and it talks to servers (Server.Do, Cluster.Do) with
// testserver's small RESP client, which shares no code with the client it
// is used to test.
package harness
