// Package testserver holds the parts of respiretest that run Redis and
// Valkey server processes and talk to them without Respire: a process
// runner, a free-port finder, a readiness wait, a small RESP2 client, and
// readers of the cluster replies (CLUSTER NODES, CLUSTER SLOTS, key
// slots). Package respiretest is built on it, and so is the integration
// test harness of the Respire repository.
//
// Most tests want package respiretest, which starts a whole server,
// cluster or Sentinel deployment and hands back a client. This package is
// for tests and tools that start servers their own way:
//
//	port, _ := testserver.FreePort()
//	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
//	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", ""}
//	p, err := testserver.Launch(ctx, bin, dir, args, testserver.Probe{Addr: addr}, "")
//	if errors.Is(err, testserver.ErrPortInUse) { ... try another port ... }
//	defer p.Kill()
//	reply, err := testserver.Do(ctx, addr, "INFO", "server")
//
// The RESP client shares no code with Respire, so that what a test
// checks with it does not depend on the client under test.
package testserver
