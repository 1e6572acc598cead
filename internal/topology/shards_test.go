package topology

import (
	"bytes"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func value(t *testing.T, raw string) resp.Value {
	t.Helper()
	m, err := resp.NewReader(bytes.NewReader([]byte(raw)), resp.Limits{}).Next()
	if err != nil {
		t.Fatal(err)
	}
	return m.Tree()
}

// A CLUSTER SHARDS reply in RESP3 (maps) and RESP2 (flat arrays): one
// shard of two ranges with a primary and a healthy and a failed replica.
func TestParseShards(t *testing.T) {
	node := func(m bool, id, port, role, health string) string {
		if m {
			return "%5\r\n+id\r\n+" + id + "\r\n+port\r\n:" + port + "\r\n+ip\r\n+127.0.0.1\r\n+role\r\n+" + role + "\r\n+health\r\n+" + health + "\r\n"
		}
		return "*10\r\n+id\r\n+" + id + "\r\n+port\r\n:" + port + "\r\n+ip\r\n+127.0.0.1\r\n+role\r\n+" + role + "\r\n+health\r\n+" + health + "\r\n"
	}
	for _, resp3 := range []bool{true, false} {
		shard := "*4\r\n+slots\r\n*4\r\n:0\r\n:99\r\n:200\r\n:299\r\n+nodes\r\n*3\r\n" +
			node(resp3, "p1", "7000", "master", "online") + node(resp3, "r1", "7001", "replica", "online") +
			node(resp3, "r2", "7002", "replica", "failed")
		if resp3 {
			shard = "%2\r\n" + shard[len("*4\r\n"):]
		}
		v, err := ParseShards(value(t, "*1\r\n"+shard), false, "127.0.0.1:7000")
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Shards) != 1 {
			t.Fatalf("resp3=%v: %d shards", resp3, len(v.Shards))
		}
		sh := v.Shards[0]
		if sh.Primary.ID != "p1" || sh.Primary.Addr != "127.0.0.1:7000" {
			t.Errorf("resp3=%v: primary %+v", resp3, sh.Primary)
		}
		if len(sh.Replicas) != 1 || sh.Replicas[0].ID != "r1" {
			t.Errorf("resp3=%v: replicas %+v (the failed one must be left out)", resp3, sh.Replicas)
		}
		if len(sh.Ranges) != 2 || sh.Ranges[1] != [2]int{200, 299} {
			t.Errorf("resp3=%v: ranges %v", resp3, sh.Ranges)
		}
		if o := v.owners(); o[50] != "p1" || o[150] != "" || o[250] != "p1" {
			t.Errorf("resp3=%v: owners wrong", resp3)
		}
	}
	// A failed master still listed before its promoted replica (Valkey).
	shard := "%2\r\n+slots\r\n*2\r\n:0\r\n:99\r\n+nodes\r\n*2\r\n" +
		node(true, "old", "7000", "master", "fail") + node(true, "new", "7001", "master", "online")
	v, err := ParseShards(value(t, "*1\r\n"+shard), false, "127.0.0.1:7001")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Shards) != 1 || v.Shards[0].Primary.ID != "new" {
		t.Errorf("the healthy master must be the primary: %+v", v.Shards)
	}
	if _, err := ParseShards(value(t, "*1\r\n*4\r\n+slots\r\n*2\r\n:5\r\n:99999\r\n+nodes\r\n*0\r\n"), false, ""); err == nil {
		t.Error("a slot out of range must be refused")
	}
}
