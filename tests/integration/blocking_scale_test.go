package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Blocked consumers at scale (issue 31): with the default Options, the
// blocking pool opens a connection per caller blocked at once, so that a
// thousand job-queue or stream consumers all block, and all get their
// item. The tests push only once every caller is blocked on the server.

// scaleCallers is how many callers block at once.
const scaleCallers = 1000

// blockAll runs n callers of call at once, waits until blocked reports
// them all blocked on the server, then calls feed, which gives each one
// item, and returns what the callers got, in caller order.
func blockAll(t *testing.T, n int, call func(i int) (string, error), blocked func() int, feed func()) []string {
	t.Helper()
	got := make([]string, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			v, err := call(i)
			got[i] = v
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return blocked() == n }, 30*time.Second, 5*time.Millisecond,
		"waiting for %d blocked callers", n)
	feed()
	var failed []error
	for range n {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	require.Empty(t, failed, "%d of %d callers failed", len(failed), n)
	return got
}

// requireEach checks that the callers got the values 0 to n-1, each once.
func requireEach(t *testing.T, got []string) {
	t.Helper()
	seen := make(map[string]bool, len(got))
	for _, v := range got {
		require.False(t, seen[v], "value %q delivered twice", v)
		seen[v] = true
	}
	for i := range got {
		require.True(t, seen[strconv.Itoa(i)], "value %d never delivered", i)
	}
}

// requirePoolGaveBack checks that the client holds one idle blocking
// connection per caller blocked at once, none busy, within the bound.
func requirePoolGaveBack(t *testing.T, c *respire.Client, n int) {
	t.Helper()
	st := c.PoolStats()
	assert.Zero(t, st.BlockingBusy)
	assert.Equal(t, n, st.BlockingIdle, "a connection per caller blocked at once, given back")
	assert.LessOrEqual(t, n, st.BlockingSize)
}

// TestBlockingScaleSingle: 1,000 callers blocked at once in BLPOP, in
// XREADGROUP BLOCK and in BZPOPMIN on one server, with the default
// Options, all get an item once a producer pushes them.
func TestBlockingScaleSingle(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	blocked := func() int { return blockedClients(t, srv) }
	bg := ctxT(t)
	items := make([]string, scaleCallers)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}

	t.Run("BLPOP", func(t *testing.T) {
		c := connect(t, respire.Options{Addr: srv.Addr})
		got := blockAll(t, scaleCallers, func(int) (string, error) {
			v, err := c.BLPop(bg, time.Minute, "scale:list")
			return v.Element, err
		}, blocked, func() {
			_, err := c.RPush(bg, "scale:list", items...)
			require.NoError(t, err)
		})
		requireEach(t, got)
		requirePoolGaveBack(t, c, scaleCallers)
	})

	t.Run("XREADGROUP", func(t *testing.T) {
		c := connect(t, respire.Options{Addr: srv.Addr})
		require.NoError(t, c.XGroupCreate(bg, "scale:stream", "workers", "$", &respire.XGroupCreateOptions{MkStream: true}))
		block := time.Minute
		got := blockAll(t, scaleCallers, func(i int) (string, error) {
			s, err := c.XReadGroup(bg, "workers", "w"+strconv.Itoa(i), []string{"scale:stream"}, []string{">"},
				&respire.XReadGroupOptions{Count: 1, Block: &block})
			if err != nil {
				return "", err
			}
			if len(s) != 1 || len(s[0].Entries) != 1 || len(s[0].Entries[0].Fields) != 1 {
				return "", fmt.Errorf("consumer %d read %+v", i, s)
			}
			return s[0].Entries[0].Fields[0].Value, nil
		}, blocked, func() {
			b := c.NewBatch()
			for _, v := range items {
				b.XAdd("scale:stream", "*", []respire.FieldValue{{Field: "job", Value: v}}, nil)
			}
			require.NoError(t, b.Exec(bg))
		})
		requireEach(t, got)
		requirePoolGaveBack(t, c, scaleCallers)
	})

	t.Run("BZPOPMIN", func(t *testing.T) {
		c := connect(t, respire.Options{Addr: srv.Addr})
		got := blockAll(t, scaleCallers, func(int) (string, error) {
			v, err := c.BZPopMin(bg, time.Minute, "scale:zset")
			return v.Member, err
		}, blocked, func() {
			members := make([]respire.ScoredMember, len(items))
			for i, v := range items {
				members[i] = respire.ScoredMember{Member: v, Score: float64(i)}
			}
			_, err := c.ZAdd(bg, "scale:zset", members, nil)
			require.NoError(t, err)
		})
		requireEach(t, got)
		requirePoolGaveBack(t, c, scaleCallers)
	})
}

// TestBlockingScaleCluster: 1,000 callers blocked at once in BLPOP on a
// cluster, on keys spread over its primaries, with the default Options,
// all get their item; each primary's pool holds the connections of the
// callers blocked there.
func TestBlockingScaleCluster(t *testing.T) {
	hc := harness.SharedCluster(t, "")
	const name = "blocking-scale"
	c := connect(t, respire.Options{ClientName: name, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	bg := ctxT(t)
	perMaster := func() []int {
		var n []int
		for _, m := range hc.Masters() {
			n = append(n, blockedNamed(t, m.Server, name))
		}
		return n
	}
	blocked := func() int {
		sum := 0
		for _, n := range perMaster() {
			sum += n
		}
		return sum
	}
	key := func(i int) string { return "blkscale:" + strconv.Itoa(i) }
	var spread []int
	got := blockAll(t, scaleCallers, func(i int) (string, error) {
		v, err := c.BLPop(bg, time.Minute, key(i))
		return v.Element, err
	}, func() int {
		n := blocked()
		if n == scaleCallers {
			spread = perMaster()
		}
		return n
	}, func() {
		b := c.NewBatch()
		for i := range scaleCallers {
			b.RPush(key(i), strconv.Itoa(i))
		}
		require.NoError(t, b.Exec(bg))
	})
	requireEach(t, got)
	for i, v := range got {
		require.Equal(t, strconv.Itoa(i), v)
	}
	t.Logf("blocked callers per primary: %v", spread)
	for _, n := range spread {
		assert.Positive(t, n, "keys spread over every primary")
	}
	requirePoolGaveBack(t, c, scaleCallers)
}

// blockedNamed counts the clients named name that are blocked on srv
// (CLIENT LIST flag b): on a shared server, other tests' blocked clients
// are not counted.
func blockedNamed(t *testing.T, srv *harness.Server, name string) int {
	t.Helper()
	v, err := srv.Do(ctxT(t), "CLIENT", "LIST")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(v.(string), "\n") {
		named, flagged := false, false
		for _, f := range strings.Fields(line) {
			switch {
			case f == "name="+name:
				named = true
			case strings.HasPrefix(f, "flags="):
				flagged = strings.Contains(strings.TrimPrefix(f, "flags="), "b")
			}
		}
		if named && flagged {
			n++
		}
	}
	return n
}

// TestBlockingScaleCancel: callers blocked at once whose context is
// cancelled return the context's error, and their connections, which still
// owe a reply, are closed: the server sees them go, and the client keeps
// none.
func TestBlockingScaleCancel(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	base := connectedClients(t, srv)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	const n = 300
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.BLPop(ctx, 0, "scalecancel:list")
			errs <- err
		}()
	}
	waitBlocked(t, srv, n)
	cancel()
	for range n {
		err := <-errs
		require.ErrorIs(t, err, context.Canceled)
	}
	st := c.PoolStats()
	assert.Zero(t, st.BlockingBusy+st.BlockingIdle, "abandoned connections are closed, not kept")
	require.Eventually(t, func() bool { return connectedClients(t, srv) == base }, 10*time.Second, 5*time.Millisecond)
	// Nothing was popped by an abandoned connection.
	_, err := c.RPush(ctxT(t), "scalecancel:list", "v")
	require.NoError(t, err)
	v, err := c.BLPop(ctxT(t), time.Second, "scalecancel:list")
	require.NoError(t, err)
	assert.Equal(t, "v", v.Element)
}

// TestBlockingPoolBound: a caller that finds the blocking pool at its
// bound (Options.BlockingPoolSize, every connection busy) fails at once,
// whatever its context, with an error wrapping ErrPoolExhausted that names
// the bound and the option: blocking commands, transactions, Watch and
// WithConn alike. Other commands are unaffected, and the pool recovers.
func TestBlockingPoolBound(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, BlockingPoolSize: 2})
	bg := ctxT(t)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			_, err := c.BLPop(bg, 0, fmt.Sprint("bound:", i))
			assert.NoError(t, err)
		})
	}
	waitBlocked(t, srv, 2)

	check := func(what string, err error) {
		t.Helper()
		require.ErrorIs(t, err, respire.ErrPoolExhausted, what)
		require.ErrorIs(t, err, respire.ErrNotSent, what)
		require.NoError(t, bg.Err(), "%s: at once, not when the context ended", what)
		assert.Contains(t, err.Error(), "all 2 connections", what)
		assert.Contains(t, err.Error(), "Options.BlockingPoolSize", what)
	}
	_, err := c.BLPop(bg, time.Second, "bound:2")
	check("BLPOP", err)
	tx := c.NewTx()
	tx.Set("bound:k", "v", nil)
	check("Tx", tx.Exec(bg))
	check("Watch", c.Watch(bg, func(*respire.Tx) error { return nil }, "bound:k"))
	check("WithConn", c.WithConn(bg, func(*respire.Conn) error { return errors.New("not called") }))

	require.NoError(t, c.Set(bg, "bound:k", "v", nil))
	for i := range 2 {
		_, err := c.RPush(bg, fmt.Sprint("bound:", i), "v")
		require.NoError(t, err)
	}
	wg.Wait()
	_, err = c.BLPop(bg, 10*time.Millisecond, "bound:2")
	require.ErrorIs(t, err, respire.Nil)
}

// infoField reads a numeric field of INFO through c, a client already
// connected (a new connection may be refused on a full server).
func infoField(t *testing.T, c *respire.Client, section, field string) int {
	t.Helper()
	v, err := c.Info(ctxT(t), section)
	require.NoError(t, err)
	for _, line := range strings.Split(v, "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			k, err := strconv.Atoi(n)
			require.NoError(t, err)
			return k
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// TestBlockingScaleServerFull: more callers block at once than the
// server's maxclients lets connect. The dials it refuses ("max number of
// clients reached") fail no caller: they are tried again, and the callers
// take the connections others give back, so that every caller gets its
// item once a producer pushes them.
func TestBlockingScaleServerFull(t *testing.T) {
	const maxClients, n = 40, 100
	srv := harness.Start(t, harness.Config{Args: []string{"maxclients " + strconv.Itoa(maxClients)}})
	producer := connect(t, respire.Options{Addr: srv.Addr})
	c := connect(t, respire.Options{Addr: srv.Addr})
	bg := ctxT(t)
	errs := make(chan error, n)
	got := make(chan string, n)
	for range n {
		go func() {
			v, err := c.BLPop(bg, 0, "full:list")
			got <- v.Element
			errs <- err
		}()
	}
	// Every place the server has is taken by a blocked caller (less the
	// two clients' multiplexed connections), and it refused more.
	require.Eventually(t, func() bool {
		return infoField(t, producer, "clients", "blocked_clients") == maxClients-2 &&
			infoField(t, producer, "stats", "rejected_connections") > 0
	}, 30*time.Second, 5*time.Millisecond)
	items := make([]string, n)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	_, err := producer.RPush(bg, "full:list", items...)
	require.NoError(t, err)
	vals := make([]string, n)
	for i := range n {
		require.NoError(t, <-errs)
		vals[i] = <-got
	}
	requireEach(t, vals)
	st := c.PoolStats()
	assert.LessOrEqual(t, st.BlockingIdle+st.BlockingBusy, maxClients-2)
	t.Logf("refused dials: %d", infoField(t, producer, "stats", "rejected_connections"))
}
