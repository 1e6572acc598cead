package topology

import (
	"bytes"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values of every RESP type, as a server might send for a field this
// parser does not know.
func oddValues() map[string]resp.Value {
	str := func(t resp.Type, s string) resp.Value { return resp.Value{Type: t, Str: s} }
	return map[string]resp.Value{
		"simple":    str(resp.TypeSimpleString, "x"),
		"bulk":      str(resp.TypeBulkString, "x"),
		"integer":   {Type: resp.TypeInteger, Int: 7},
		"null":      {Type: resp.TypeNull, Null: true},
		"null2":     {Type: resp.TypeBulkString, Null: true},
		"nullarray": {Type: resp.TypeArray, Null: true},
		"boolean":   {Type: resp.TypeBoolean, Int: 1},
		"double":    {Type: resp.TypeDouble, Float: 1.5},
		"bignumber": str(resp.TypeBigNumber, "12345678901234567890"),
		"verbatim":  {Type: resp.TypeVerbatim, Format: "txt", Str: "x"},
		"error":     str(resp.TypeBulkError, "ERR odd"),
		"array":     {Type: resp.TypeArray, Elems: []resp.Value{str(resp.TypeBulkString, "a"), {Type: resp.TypeInteger, Int: 1}}},
		"set":       {Type: resp.TypeSet, Elems: []resp.Value{str(resp.TypeBulkString, "a")}},
		"map": {Type: resp.TypeMap, Elems: []resp.Value{str(resp.TypeBulkString, "k"),
			{Type: resp.TypeMap, Elems: []resp.Value{str(resp.TypeBulkString, "deep"), {Type: resp.TypeArray}}}}},
		"empty": {Type: resp.TypeArray},
	}
}

// kv builds a map (resp3) or a flat array (RESP2) of alternating keys and
// values.
func kv(resp3 bool, pairs ...any) resp.Value {
	v := resp.Value{Type: resp.TypeArray}
	if resp3 {
		v.Type = resp.TypeMap
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Elems = append(v.Elems, resp.Value{Type: resp.TypeBulkString, Str: pairs[i].(string)}, toValue(pairs[i+1]))
	}
	return v
}

func toValue(x any) resp.Value {
	switch x := x.(type) {
	case string:
		return resp.Value{Type: resp.TypeBulkString, Str: x}
	case int:
		return resp.Value{Type: resp.TypeInteger, Int: int64(x)}
	case resp.Value:
		return x
	case []resp.Value:
		return resp.Value{Type: resp.TypeArray, Elems: x}
	}
	panic("toValue")
}

func arr(xs ...any) resp.Value {
	v := resp.Value{Type: resp.TypeArray}
	for _, x := range xs {
		v.Elems = append(v.Elems, toValue(x))
	}
	return v
}

// wire encodes v and reads it back, as it would come off a connection.
func wire(t *testing.T, v resp.Value) resp.Value {
	t.Helper()
	m, err := resp.NewReader(bytes.NewReader(resp.AppendValue(nil, v)), resp.Limits{}).Next()
	require.NoError(t, err)
	return m.Tree()
}

// shardsReply is a CLUSTER SHARDS reply of one shard (slots 0-99 and
// 200-299) with primary p1 (zone-a) and replica r1 (zone-b), with extra
// pairs added to the shard and to every node.
func shardsReply(resp3 bool, shardExtra, nodeExtra []any) resp.Value {
	node := func(id string, port int, role, zone string) resp.Value {
		pairs := append([]any{"id", id, "port", port, "ip", "10.0.0.1", "endpoint", "10.0.0.1",
			"role", role, "replication-offset", 42, "health", "online", "availability-zone", zone}, nodeExtra...)
		// Unknown fields first too: a parser must not rely on order.
		return kv(resp3, append(append([]any{}, nodeExtra...), pairs...)...)
	}
	shard := append([]any{"slots", arr(0, 99, 200, 299), "nodes",
		[]resp.Value{node("p1", 7000, "master", "zone-a"), node("r1", 7001, "replica", "zone-b")}}, shardExtra...)
	return arr(kv(resp3, shard...))
}

func checkOneShard(t *testing.T, v *View, zones bool) {
	t.Helper()
	require.Len(t, v.Shards, 1)
	sh := v.Shards[0]
	assert.Equal(t, [][2]int{{0, 99}, {200, 299}}, sh.Ranges)
	assert.Equal(t, "p1", sh.Primary.ID)
	assert.Equal(t, "10.0.0.1:7000", sh.Primary.Addr)
	require.Len(t, sh.Replicas, 1)
	assert.Equal(t, "r1", sh.Replicas[0].ID)
	assert.Equal(t, "10.0.0.1:7001", sh.Replicas[0].Addr)
	if zones {
		assert.Equal(t, "zone-a", sh.Primary.Zone)
		assert.Equal(t, "zone-b", sh.Replicas[0].Zone)
	}
}

// Unknown keys of every type, in a shard and in its nodes, RESP2 and
// RESP3, are skipped.
func TestParseShardsUnknownFields(t *testing.T) {
	for name, odd := range oddValues() {
		for _, resp3 := range []bool{false, true} {
			extra := []any{"future-" + name, odd}
			for _, c := range []struct {
				where        string
				shard, nodes []any
			}{{"shard", extra, nil}, {"node", nil, extra}, {"both", extra, extra}} {
				v, err := ParseShards(wire(t, shardsReply(resp3, c.shard, c.nodes)), false, "10.0.0.9:7000")
				require.NoError(t, err, "%s of type %s in the %s (resp3 %v)", name, odd.Type, c.where, resp3)
				checkOneShard(t, v, true)
			}
		}
	}
	// A known key with a value of an unexpected type reads as absent: an
	// availability-zone given as a map is no zone, not an error.
	v, err := ParseShards(wire(t, shardsReply(true, nil, []any{"availability-zone", oddValues()["map"]})), false, "")
	require.NoError(t, err)
	require.Len(t, v.Shards, 1)
	// A node entry that is not a map is skipped; the others stay.
	r := shardsReply(true, nil, nil)
	nodes := &r.Elems[0].Elems[3]
	nodes.Elems = append([]resp.Value{toValue("garbage"), {Type: resp.TypeInteger, Int: 3}}, nodes.Elems...)
	v, err = ParseShards(wire(t, r), false, "")
	require.NoError(t, err)
	checkOneShard(t, v, true)
}

// Optional fields may be missing: no endpoint (the ip is used), neither
// (the replying node's host), no tls-port (the port, even with TLS), no
// health (taken as online), no zone, no replication-offset.
func TestParseShardsMissingOptional(t *testing.T) {
	for _, resp3 := range []bool{false, true} {
		reply := arr(kv(resp3, "slots", arr(0, 16383), "nodes", []resp.Value{
			kv(resp3, "id", "p1", "port", 7000, "ip", "10.0.0.1", "role", "master"),
			kv(resp3, "id", "r1", "port", 7001, "role", "replica", "health", "online"),
			kv(resp3, "id", "r2", "port", 7002, "endpoint", "?", "ip", "", "role", "replica"),
			kv(resp3, "id", "", "port", 7003, "role", "replica"), // no id: skipped
			kv(resp3, "id", "r4", "role", "replica"),             // no port: skipped
		}))
		v, err := ParseShards(wire(t, reply), true, "10.0.0.9:7000")
		require.NoError(t, err)
		require.Len(t, v.Shards, 1)
		sh := v.Shards[0]
		assert.Equal(t, "10.0.0.1:7000", sh.Primary.Addr)
		assert.True(t, sh.Primary.Healthy)
		assert.Empty(t, sh.Primary.Zone)
		require.Len(t, sh.Replicas, 2)
		assert.Equal(t, "10.0.0.9:7001", sh.Replicas[0].Addr)
		assert.Equal(t, "10.0.0.9:7002", sh.Replicas[1].Addr)
	}
	// A shard without nodes or without slots is no shard; no error.
	v, err := ParseShards(wire(t, arr(kv(true, "slots", arr(0, 5)), kv(true, "nodes", arr()))), false, "")
	require.NoError(t, err)
	assert.Empty(t, v.Shards)
}

// slotsReply is a CLUSTER SLOTS reply: slots 0-99 and 200-299 served by
// p1 with replica r1, with extra elements after every node entry's id and
// after every entry's nodes.
func slotsReply(nodeExtra, entryExtra []resp.Value) resp.Value {
	node := func(host string, port int, id string, meta resp.Value) resp.Value {
		n := arr(host, port, id, meta)
		n.Elems = append(n.Elems, nodeExtra...)
		return n
	}
	entry := func(lo, hi int) resp.Value {
		e := arr(lo, hi,
			node("10.0.0.1", 7000, "p1", kv(true, "hostname", "a.example", "availability-zone", "zone-a")),
			node("10.0.0.1", 7001, "r1", kv(false, "availability-zone", "zone-b")))
		e.Elems = append(e.Elems, entryExtra...)
		return e
	}
	return arr(entry(0, 99), entry(200, 299))
}

// Unknown elements of every type after a CLUSTER SLOTS node entry's host,
// port, id and metadata, and after an entry's nodes, are skipped; so are
// unknown keys of every type in the metadata map.
func TestParseSlotsUnknownFields(t *testing.T) {
	for name, odd := range oddValues() {
		for _, c := range []struct {
			where       string
			node, entry []resp.Value
		}{{"node", []resp.Value{odd}, nil}, {"entry", nil, []resp.Value{odd}}} {
			v, err := ParseSlots(wire(t, slotsReply(c.node, c.entry)), "10.0.0.9:7000")
			require.NoError(t, err, "%s after the %s", name, c.where)
			checkOneShard(t, v, true)
		}
		r := slotsReply(nil, nil)
		meta := &r.Elems[0].Elems[2].Elems[3]
		meta.Elems = append(meta.Elems, toValue("future-"+name), odd)
		v, err := ParseSlots(wire(t, r), "")
		require.NoError(t, err, "%s in the metadata", name)
		checkOneShard(t, v, true)
	}
	// Metadata that is not a map, or missing altogether (Redis 6), and an
	// empty host (the replying node's).
	r := arr(arr(0, 99, arr("", 7000, "p1"), arr("10.0.0.1", 7001, "r1", "not-a-map")),
		arr(200, 299, arr("?", 7000, "p1", oddValues()["null"]), arr("10.0.0.1", 7001, "r1")))
	v, err := ParseSlots(wire(t, r), "10.0.0.1:7000")
	require.NoError(t, err)
	checkOneShard(t, v, false)
	// A primary entry that is not host, port and id is an error that says
	// so; a bad slot range too.
	_, err = ParseSlots(wire(t, arr(arr(0, 99, arr("10.0.0.1")))), "")
	assert.ErrorIs(t, err, errBadTopology)
	assert.ErrorContains(t, err, "primary entry")
	_, err = ParseSlots(wire(t, arr(arr(0, "x", arr("10.0.0.1", 7000, "p1")))), "")
	assert.ErrorContains(t, err, `slot range 0-"x"`)
}
