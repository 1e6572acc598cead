package scaleout

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sentinel deployments beyond the plain one of package integration: over
// TLS (Valkey 9.1, sentinels with requirepass), with sentinels that
// require an ACL user of their own (Redis 8.6), and with every process
// announcing a hostname (Valkey 8.1). Each test starts its own small
// deployment (1 master, 1 replica, 3 sentinels) and runs in parallel with
// the others; each fails the master over once.

// sentinelClientOpts are the options of a client of d; DialTimeout is
// short so that a test of a wrong setting fails fast.
func sentinelClientOpts(d *harness.Sentinels, addrs []string) respire.Options {
	return respire.Options{
		Sentinel:    &respire.SentinelOptions{MasterName: d.Config.MasterName, Addrs: addrs},
		DialTimeout: time.Second,
	}
}

// sentinelFailover fails the master over with SENTINEL FAILOVER while c
// writes, and checks that c follows: it names the new master, and a write
// after the switch lands there. It returns the new master's address.
func sentinelFailover(t *testing.T, d *harness.Sentinels, c *respire.Client, prefix string) string {
	t.Helper()
	ctx := ctxT(t)
	old := c.SentinelMaster()
	require.NotEmpty(t, old)
	require.NoError(t, c.Set(ctx, prefix+"before", "1", nil))
	require.NoError(t, d.WaitReplicated(ctx, old))
	t0 := time.Now()
	require.NoError(t, d.Failover(ctx))
	// The client switches at the promotion, before the sentinels'
	// +switch-master.
	for c.SentinelMaster() == old {
		select {
		case <-ctx.Done():
			t.Fatalf("the client still names %s", old)
		case <-time.After(time.Millisecond):
		}
	}
	switched := time.Since(t0)
	// Writes wait while the watcher is fenced and go to the new master.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, c.Set(wctx, prefix+"after", "2", nil))
	wrote := time.Since(t0)
	ev, err := d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName)
	require.NoError(t, err)
	now := c.SentinelMaster()
	want, err := d.MasterAddr(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, now, "the client's master and the sentinels'")
	m := d.Node(now)
	require.NotNil(t, m, "the client names %s, not a data node", now)
	got, err := m.Do(ctx, "GET", prefix+"after")
	require.NoError(t, err)
	assert.Equal(t, "2", got, "the write after the switch is on the new master")
	v, err := m.Do(ctx, "GET", prefix+"before")
	require.NoError(t, err)
	assert.Equal(t, "1", v, "the write before the failover survived it")
	t.Logf("failover %s -> %s: the client switched %v and wrote %v after SENTINEL FAILOVER, the sentinels' +switch-master came at %v",
		old, now, switched.Round(time.Millisecond), wrote.Round(time.Millisecond), ev.At.Sub(t0).Round(time.Millisecond))
	return now
}

// TestSentinelTLS: data nodes and sentinels serve TLS only. A client with
// Options.TLSConfig (which the sentinels get too) writes and reads, and
// follows a failover; one in plain text to the sentinels gets an error
// that says they may serve TLS, and one that verifies their certificate
// against the wrong CA gets a permanent error at once.
func TestSentinelTLS(t *testing.T) {
	t.Parallel()
	d := harness.StartSentinels(t, harness.SentinelConfig{
		Flavor:           harness.Valkey91,
		Replicas:         1,
		TLS:              true,
		SentinelPassword: "sentinel-secret", // requirepass
		DataPassword:     "data-secret",
	})
	require.NotNil(t, d.TLSConfig)
	ctx := ctxT(t)
	// The subtests run at once: only the last changes the deployment, and
	// the others' errors do not depend on which node is master.

	t.Run("plain-client", func(t *testing.T) {
		t.Parallel()
		o := sentinelClientOpts(d, d.Addrs())
		o.Password, o.Sentinel.Password = "data-secret", "sentinel-secret"
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		start := time.Now()
		c, err := respire.Connect(cctx, o)
		if c != nil {
			c.Close()
		}
		require.Error(t, err)
		t.Logf("plain client, TLS sentinels (%v): %v", time.Since(start).Round(time.Millisecond), err)
		assert.ErrorIs(t, err, respire.ErrNoPrimary)
		assert.Contains(t, err.Error(), "TLS", "the error says the sentinels may expect TLS")
	})
	t.Run("NoTLS-to-TLS-sentinels", func(t *testing.T) {
		t.Parallel()
		o := sentinelClientOpts(d, d.Addrs())
		o.Password, o.Sentinel.Password = "data-secret", "sentinel-secret"
		o.TLSConfig = d.TLSConfig
		o.Sentinel.NoTLS = true
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		c, err := respire.Connect(cctx, o)
		if c != nil {
			c.Close()
		}
		require.Error(t, err)
		t.Logf("plain text to the sentinels only: %v", err)
		assert.ErrorIs(t, err, respire.ErrNoPrimary)
		assert.Contains(t, err.Error(), "TLS")
	})
	wrongName := d.TLSConfig.Clone()
	wrongName.ServerName = "redis.example"
	for name, bad := range map[string]*tls.Config{
		"wrong-CA":   {ServerName: "localhost", MinVersion: tls.VersionTLS12}, // the system roots
		"wrong-name": wrongName,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := sentinelClientOpts(d, d.Addrs())
			o.Password, o.Sentinel.Password = "data-secret", "sentinel-secret"
			o.TLSConfig = bad
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			start := time.Now()
			c, err := respire.Connect(cctx, o)
			if c != nil {
				c.Close()
			}
			require.Error(t, err)
			elapsed := time.Since(start)
			t.Logf("unverified sentinel certificates (%v): %v", elapsed.Round(time.Millisecond), err)
			var he *respire.HandshakeError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, "TLS", he.Step)
			assert.True(t, he.Permanent())
			assert.Less(t, elapsed, 5*time.Second, "a permanent error is returned at once")
		})
	}
	t.Run("failover", func(t *testing.T) {
		t.Parallel()
		// Options.TLSConfig alone: the sentinels get it too. No
		// ServerName: each certificate is checked against the address
		// dialed (the sentinels', and the master's and replica's as the
		// sentinels name them).
		o := sentinelClientOpts(d, d.Addrs())
		o.Password, o.Sentinel.Password = "data-secret", "sentinel-secret"
		o.TLSConfig = d.TLSConfig.Clone()
		o.TLSConfig.ServerName = ""
		o.ReadFrom = respire.ReadReplica
		c := connect(t, o)
		master := c.SentinelMaster()
		for i := range 20 {
			require.NoError(t, c.Set(ctx, "tls:"+strconv.Itoa(i), "v"+strconv.Itoa(i), nil))
		}
		require.NoError(t, d.WaitReplicated(ctx, master))
		replicaReads(t, d, c, master, "tls:")
		sentinelFailover(t, d, c, "tls:")

		// The URL form: rediss-sentinel:// is TLS to both; the test CA
		// comes in through the options the URL gives.
		u, err := respire.ParseURL("rediss-sentinel://:data-secret@" + strings.Join(d.Addrs(), ",") + "/" +
			d.Config.MasterName + "?sentinel_password=sentinel-secret")
		require.NoError(t, err)
		require.NotNil(t, u.TLSConfig)
		require.NotNil(t, u.Sentinel.TLSConfig)
		u.TLSConfig.RootCAs, u.Sentinel.TLSConfig.RootCAs = d.TLSConfig.RootCAs, d.TLSConfig.RootCAs
		cu := connect(t, u)
		v, err := cu.Get(ctx, "tls:after")
		require.NoError(t, err)
		assert.Equal(t, "2", v)
	})
}

// TestSentinelACL: the sentinels require an ACL user of their own, and
// the data nodes a password the sentinels and the client know. The right
// credentials work through a failover; a wrong sentinel password or user
// is a permanent *HandshakeError returned at once, not a wait for the
// context's end.
func TestSentinelACL(t *testing.T) {
	t.Parallel()
	d := harness.StartSentinels(t, harness.SentinelConfig{
		Flavor:           harness.Redis86,
		Replicas:         1,
		SentinelUser:     "watcher",
		SentinelPassword: "sentinel-secret",
		DataPassword:     "data-secret",
	})
	ctx := ctxT(t)

	wrong := func(t *testing.T, o respire.Options, prefix string) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		start := time.Now()
		c, err := respire.Connect(cctx, o)
		if c != nil {
			c.Close()
		}
		elapsed := time.Since(start)
		require.Error(t, err)
		t.Logf("%v: %v", elapsed.Round(time.Millisecond), err)
		assert.ErrorIs(t, err, respire.ErrNoPrimary)
		var he *respire.HandshakeError
		require.ErrorAs(t, err, &he)
		assert.True(t, he.Permanent())
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, prefix, se.Prefix)
		assert.NotContains(t, err.Error(), "sentinel-secret", "no password in the error")
		assert.Less(t, elapsed, 5*time.Second, "a permanent error is returned at once")
	}
	t.Run("no-sentinel-credentials", func(t *testing.T) {
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "data-secret"
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		start := time.Now()
		c, err := respire.Connect(cctx, o)
		if c != nil {
			c.Close()
		}
		require.Error(t, err)
		t.Logf("%v: %v", time.Since(start).Round(time.Millisecond), err)
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "NOAUTH", se.Prefix)
		assert.Less(t, time.Since(start), 5*time.Second, "a permanent error is returned at once")
	})
	t.Run("wrong-sentinel-password", func(t *testing.T) {
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "data-secret"
		o.Sentinel.Username, o.Sentinel.Password = "watcher", "not-it"
		wrong(t, o, "WRONGPASS")
	})
	t.Run("NewClient-wrong-sentinel-password", func(t *testing.T) {
		// Without Connect: the first command waits for the discovery and
		// gets the sentinels' refusal, not a wait for its context.
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "data-secret"
		o.Sentinel.Username, o.Sentinel.Password = "watcher", "not-it"
		c, err := respire.NewClient(o)
		require.NoError(t, err)
		defer c.Close()
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		start := time.Now()
		for _, op := range []func() error{
			func() error { _, err := c.Get(cctx, "acl:k"); return err },
			func() error { return c.Set(cctx, "acl:k", "v", nil) },
		} {
			err := op()
			require.Error(t, err)
			t.Logf("%v: %v", time.Since(start).Round(time.Millisecond), err)
			assert.ErrorIs(t, err, respire.ErrNotSent)
			assert.ErrorIs(t, err, respire.ErrNoPrimary)
			var he *respire.HandshakeError
			require.ErrorAs(t, err, &he)
			assert.True(t, he.Permanent())
		}
		assert.Less(t, time.Since(start), 5*time.Second, "a permanent error is returned at once")
	})
	t.Run("user-without-SENTINEL", func(t *testing.T) {
		// A user the sentinels know but do not allow SENTINEL: NOPERM is
		// as permanent as a wrong password.
		for _, sp := range d.Sentinel {
			_, err := sp.Do(ctx, "ACL", "SETUSER", "limited", "on", ">limited-pw", "&*", "+@all", "-sentinel")
			require.NoError(t, err)
		}
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "data-secret"
		o.Sentinel.Username, o.Sentinel.Password = "limited", "limited-pw"
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		start := time.Now()
		c, err := respire.Connect(cctx, o)
		if c != nil {
			c.Close()
		}
		require.Error(t, err)
		t.Logf("%v: %v", time.Since(start).Round(time.Millisecond), err)
		assert.ErrorIs(t, err, respire.ErrNoPrimary)
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "NOPERM", se.Prefix)
		assert.Less(t, time.Since(start), 5*time.Second, "a permanent error is returned at once")
	})
	t.Run("data-credentials-given-to-sentinels", func(t *testing.T) {
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "data-secret"
		o.Sentinel.Password = "data-secret"
		wrong(t, o, "WRONGPASS")
	})
	t.Run("wrong-data-password", func(t *testing.T) {
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "sentinel-secret"
		o.Sentinel.Username, o.Sentinel.Password = "watcher", "sentinel-secret"
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		start := time.Now()
		c, err := respire.Connect(cctx, o)
		if c != nil {
			c.Close()
		}
		require.Error(t, err)
		t.Logf("%v: %v", time.Since(start).Round(time.Millisecond), err)
		var he *respire.HandshakeError
		require.ErrorAs(t, err, &he)
		assert.True(t, he.Permanent())
		assert.Less(t, time.Since(start), 5*time.Second, "a permanent error is returned at once")
	})
	t.Run("failover", func(t *testing.T) {
		o := sentinelClientOpts(d, d.Addrs())
		o.Password = "data-secret"
		o.Sentinel.Username, o.Sentinel.Password = "watcher", "sentinel-secret"
		c := connect(t, o)
		sentinelFailover(t, d, c, "acl:")

		// The URL form: sentinel_username and sentinel_password.
		u, err := respire.ParseURL("redis-sentinel://:data-secret@" + strings.Join(d.Addrs(), ",") + "/" +
			d.Config.MasterName + "?sentinel_username=watcher&sentinel_password=sentinel-secret")
		require.NoError(t, err)
		cu := connect(t, u)
		v, err := cu.Get(ctx, "acl:after")
		require.NoError(t, err)
		assert.Equal(t, "2", v)
	})
}

// TestSentinelHostnames: every process announces "localhost", so the
// sentinels name the master, its replicas and each other by hostname. The
// client, given the sentinels by hostname as announce-hostnames
// deployments are, dials what the sentinels name, follows a failover, and
// reads from the replica. Given the sentinels by IP address, it does not
// count them twice when they announce themselves by name.
func TestSentinelHostnames(t *testing.T) {
	t.Parallel()
	d := harness.StartSentinels(t, harness.SentinelConfig{Flavor: harness.Valkey81, Replicas: 1, Hostnames: true})
	ctx := ctxT(t)
	byName := make([]string, 0, len(d.Sentinel))
	for _, a := range d.Addrs() {
		_, port, _ := strings.Cut(a, ":")
		byName = append(byName, "localhost:"+port)
	}
	master, err := d.MasterAddr(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(master, "localhost:"), "the sentinels name the master %s", master)

	o := sentinelClientOpts(d, byName)
	o.ReadFrom = respire.ReadReplica
	c := connect(t, o)
	assert.Equal(t, master, c.SentinelMaster())
	for i := range 20 {
		require.NoError(t, c.Set(ctx, "host:"+strconv.Itoa(i), "v"+strconv.Itoa(i), nil))
	}
	require.NoError(t, d.WaitReplicated(ctx, master))
	replicaReads(t, d, c, master, "host:")

	now := sentinelFailover(t, d, c, "host:")
	assert.True(t, strings.HasPrefix(now, "localhost:"), "the new master %s", now)
	// Replica reads go to the old master, a replica now, once the
	// sentinels report it in sync.
	require.NoError(t, d.WaitStable(ctx))
	require.NoError(t, d.WaitReplicated(ctx, now))
	replicaReads(t, d, c, now, "host:")
	assert.Equal(t, now, c.SentinelMaster(), "no flapping between names of the master")

	// Given by IP address, the sentinels announce themselves by name: the
	// client knows each once.
	// Each client subscribes once to each sentinel it follows: c by name,
	// ci by IP address, not once more by name.
	require.Eventually(t, func() bool { return slices.Equal(subscribers(t, d), []int{1, 1, 1}) },
		10*time.Second, 10*time.Millisecond, "the first client subscribed to every sentinel")
	oi := sentinelClientOpts(d, d.Addrs())
	oi.Sentinel.PollInterval = 20 * time.Millisecond
	ci := connect(t, oi)
	require.NoError(t, ci.Set(ctx, "host:ip", "v", nil))
	assert.Equal(t, now, ci.SentinelMaster())
	require.Eventually(t, func() bool { return slices.Equal(subscribers(t, d), []int{2, 2, 2}) },
		10*time.Second, 10*time.Millisecond, "the second client subscribed to every sentinel")
	// Polls every 20ms learn the sentinels' names (SENTINEL SENTINELS).
	assert.Never(t, func() bool { s := subscribers(t, d); return len(s) > 0 && slices.Max(s) > 2 },
		300*time.Millisecond, 20*time.Millisecond, "a sentinel followed twice, by IP address and by name")
}

// subscribers counts, on each sentinel of d, the connections subscribed
// to channels (clients' event subscriptions; the harness's own event log
// uses a pattern).
func subscribers(t *testing.T, d *harness.Sentinels) []int {
	t.Helper()
	out := make([]int, len(d.Sentinel))
	// Not ctxT, nor require: assert.Eventually and Never may run this once
	// more after they return, as the test ends. A sentinel that does not
	// answer gives no counts, which matches no expectation.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, sp := range d.Sentinel {
		v, err := sp.Do(ctx, "CLIENT", "LIST")
		if err != nil {
			return nil
		}
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			for _, f := range strings.Fields(line) {
				if n, ok := strings.CutPrefix(f, "sub="); ok && n != "0" {
					out[i]++
				}
			}
		}
	}
	return out
}

// replicaReads checks that reads of c reach a replica of master: GETs
// counted on the replicas' commandstats grow by the reads made.
func replicaReads(t *testing.T, d *harness.Sentinels, c *respire.Client, master, prefix string) {
	t.Helper()
	ctx := ctxT(t)
	before := getCalls(t, d.Replicas(master))
	const n = 50
	require.Eventually(t, func() bool {
		_, err := c.Get(ctx, prefix+"0")
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "a replica read")
	for i := range n {
		v, err := c.Get(ctx, prefix+strconv.Itoa(i%20))
		require.NoError(t, err)
		assert.Equal(t, "v"+strconv.Itoa(i%20), v)
	}
	after := getCalls(t, d.Replicas(master))
	assert.GreaterOrEqual(t, after-before, int64(n), "GETs served by the replicas of %s", master)
	t.Logf("replicas of %s served %d GETs", master, after-before)
}

// getCalls sums cmdstat_get calls over servers.
func getCalls(t *testing.T, servers []*harness.Server) int64 {
	t.Helper()
	var sum int64
	for _, s := range servers {
		v, err := s.Do(ctxT(t), "INFO", "commandstats")
		require.NoError(t, err)
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_get:calls=")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
			require.NoError(t, err)
			sum += n
		}
	}
	return sum
}
