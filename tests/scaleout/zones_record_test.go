package scaleout

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// recordDirEnv names the directory TestRecordTopologyReplies writes to.
const recordDirEnv = "RESPIRE_RECORD_TOPOLOGY"

// TestRecordTopologyReplies records the raw bytes of CLUSTER SHARDS and
// CLUSTER SLOTS, in RESP2 and RESP3, from a cluster of 3 primaries with a
// replica each of every flavor (Valkey's nodes in availability zones, as
// zoneOf says), for the parser's unit tests in internal/topology. It is
// run by hand, from the tests directory, when a server version is added:
//
//	RESPIRE_SERVERS_DIR=... RESPIRE_RECORD_TOPOLOGY=$PWD/../internal/topology/testdata \
//	    go test -count=1 -run TestRecordTopologyReplies ./scaleout/
//
// Beside each flavor's replies it writes FLAVOR.json, what the cluster is
// as the harness sees it (CLUSTER NODES of every node, CONFIG GET
// availability-zone), which the unit tests compare the parsed replies
// with.
func TestRecordTopologyReplies(t *testing.T) {
	dir := os.Getenv(recordDirEnv)
	if dir == "" {
		t.Skip(recordDirEnv + " is not set: the recorder is run by hand")
	}
	for _, f := range harness.AllFlavors {
		t.Run(string(f), func(t *testing.T) {
			c := harness.StartCluster(t, harness.ClusterConfig{Flavor: f})
			ctx := ctxT(t)
			valkey := strings.HasPrefix(string(f), "valkey")
			if f == harness.Valkey91 {
				require.NoError(t, setZones(ctx, c))
			} else if valkey {
				for _, n := range c.Nodes {
					_, err := n.Do(ctx, "CONFIG", "SET", "availability-zone", zoneOf(c, n))
					require.NoError(t, err)
				}
			}
			from := c.Masters()[0]
			for _, proto := range []int{2, 3} {
				for _, sub := range []string{"SHARDS", "SLOTS"} {
					raw, err := rawReply(ctx, from.Addr, proto, "CLUSTER", sub)
					require.NoError(t, err)
					name := fmt.Sprintf("%s-%s-resp%d.resp", f, strings.ToLower(sub), proto)
					require.NoError(t, os.WriteFile(filepath.Join(dir, name), raw, 0o644))
				}
			}
			want, err := recordedTruth(ctx, c, from, valkey)
			require.NoError(t, err)
			b, err := json.MarshalIndent(want, "", "  ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, string(f)+".json"), append(b, '\n'), 0o644))
		})
	}
}

// recordedShard and recordedNode are the JSON of a recorded cluster, the
// shape internal/topology's tests read.
type recordedShard struct {
	Ranges   [][2]int       `json:"ranges"`
	Primary  recordedNode   `json:"primary"`
	Replicas []recordedNode `json:"replicas"`
}

type recordedNode struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
	Zone string `json:"zone,omitempty"`
}

type recordedCluster struct {
	From string `json:"from"`
	// ShardsZones says whether CLUSTER SHARDS reports the zones (Valkey
	// 9.1); Valkey 8.1 reports them in HELLO only.
	ShardsZones bool            `json:"shards_zones"`
	Shards      []recordedShard `json:"shards"`
}

// recordedTruth describes c from the harness's side.
func recordedTruth(ctx context.Context, c *harness.Cluster, from *harness.ClusterNode, valkey bool) (*recordedCluster, error) {
	out := &recordedCluster{From: from.Addr, ShardsZones: c.Flavor == harness.Valkey91}
	node := func(n *harness.ClusterNode) recordedNode {
		rn := recordedNode{ID: n.ID, Addr: n.Addr}
		if valkey {
			rn.Zone = zoneOf(c, n)
		}
		return rn
	}
	for _, m := range c.Masters() {
		v, err := m.Do(ctx, "CLUSTER", "NODES")
		if err != nil {
			return nil, err
		}
		sh := recordedShard{Primary: node(m)}
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			f := strings.Fields(line)
			if len(f) < 8 || !strings.Contains(f[2], "myself") {
				continue
			}
			for _, r := range f[8:] {
				lo, hi, ok := strings.Cut(r, "-")
				if !ok {
					hi = lo
				}
				a, err1 := strconv.Atoi(lo)
				b, err2 := strconv.Atoi(hi)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("slot range %q in CLUSTER NODES of %s", r, m.Addr)
				}
				sh.Ranges = append(sh.Ranges, [2]int{a, b})
			}
		}
		for _, r := range c.ReplicasOf(m) {
			sh.Replicas = append(sh.Replicas, node(r))
		}
		out.Shards = append(out.Shards, sh)
	}
	return out, nil
}

// rawReply sends args to addr on a new connection, after HELLO proto, and
// returns the bytes of the reply as the server sent them.
func rawReply(ctx context.Context, addr string, proto int, args ...string) ([]byte, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	rd := bufio.NewReader(nc)
	send := func(args ...string) ([]byte, error) {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := nc.Write([]byte(b.String())); err != nil {
			return nil, err
		}
		return readFrame(rd, nil)
	}
	if _, err := send("HELLO", strconv.Itoa(proto)); err != nil {
		return nil, err
	}
	return send(args...)
}

// readFrame appends one RESP2 or RESP3 value, as read, to dst.
func readFrame(rd *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	dst = append(dst, line...)
	if len(line) < 3 {
		return nil, fmt.Errorf("short line %q", line)
	}
	n, _ := strconv.Atoi(strings.TrimRight(line[1:], "\r\n"))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return dst, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return append(dst, buf...), nil
	case '*', '~', '>':
	case '%', '|':
		n *= 2
	default:
		return dst, nil
	}
	for range max(n, 0) {
		if dst, err = readFrame(rd, dst); err != nil {
			return nil, err
		}
	}
	if line[0] == '|' {
		return readFrame(rd, dst) // the value the attribute is about
	}
	return dst, nil
}
