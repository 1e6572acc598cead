package spec

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// m builds a RESP2 map: a flat array of alternating keys and values.
func m(kv ...any) []any { return kv }

func a(v ...any) []any { return v }

// encode writes v in RESP2: string as a bulk string, int as an integer,
// []any as an array.
func encode(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		fmt.Fprintf(b, "$%d\r\n%s\r\n", len(v), v)
	case int:
		fmt.Fprintf(b, ":%d\r\n", v)
	case []any:
		fmt.Fprintf(b, "*%d\r\n", len(v))
		for _, e := range v {
			encode(b, e)
		}
	case nil:
		b.WriteString("*-1\r\n")
	default:
		panic(fmt.Sprintf("encode %T", v))
	}
}

func rangeKeySpec(flags ...any) []any {
	return m("notes", "", "flags", a(flags...),
		"begin_search", m("type", "index", "spec", m("index", 1)),
		"find_keys", m("type", "range", "spec", m("lastkey", 0, "keystep", 1, "limit", 0)))
}

var fakeDocs = m(
	"get", m("summary", "Returns the value.", "since", "1.0.0", "group", "string", "complexity", "O(1)",
		"arguments", a(m("name", "key", "type", "key", "display_text", "key", "key_spec_index", 0))),
	"client", m("summary", "A container.", "since", "2.4.0", "group", "connection", "complexity", "Depends.",
		"subcommands", m(
			"client|kill", m("summary", "Terminates connections.", "since", "2.4.0", "group", "connection",
				"complexity", "O(N)", "doc_flags", a("SYSCMD"),
				"history", a(a("2.8.12", "Added new filter format.")),
				"arguments", a(m("name", "filter", "type", "oneof", "flags", a("multiple", "optional"),
					"arguments", a(
						m("name", "ip:port", "type", "string", "token", "ADDR", "since", "2.8.12", "deprecated_since", "9.9.9"),
						m("name", "skipme", "type", "pure-token", "token", "SKIPME", "flags", a("multiple_token")),
					)))),
		)),
	"vadd", m("group", "module", "module", "vectorset"),
)

var fakeInfo = a(
	a("get", 2, a("readonly", "fast"), 1, 1, 1, a("@string", "@read", "@fast"), a(), a(rangeKeySpec("RO", "access")), a()),
	a("client", -2, a(), 0, 0, 0, a("@slow"), a(), a(), a(
		a("client|kill", -3, a("admin", "noscript", "loading", "stale"), 0, 0, 0,
			a("@admin", "@slow", "@dangerous", "@connection"), a("request_policy:all_nodes", "nondeterministic_output"), a(), a()),
	)),
	a("vadd", -1, a("write", "denyoom", "module"), 1, 1, 1, a(), a(), a(rangeKeySpec("RW", "update")), a()),
)

// fakeServer answers INFO server, COMMAND DOCS and COMMAND INFO with
// canned replies, on one connection at a time, until the test ends.
func fakeServer(t *testing.T, info string, docs, cmdInfo any) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			serve(nc, info, docs, cmdInfo)
		}
	})
	return ln.Addr().String()
}

func serve(nc net.Conn, info string, docs, cmdInfo any) {
	defer nc.Close()
	r := bufio.NewReader(nc)
	for {
		req, err := readReply(r, 0)
		if err != nil {
			return
		}
		args, _ := req.([]any)
		var words []string
		for _, w := range args {
			s, _ := w.(string)
			words = append(words, strings.ToUpper(s))
		}
		var b strings.Builder
		switch strings.Join(words, " ") {
		case "INFO SERVER":
			encode(&b, info)
		case "COMMAND DOCS":
			encode(&b, docs)
		case "COMMAND INFO":
			encode(&b, cmdInfo)
		default:
			b.WriteString("-ERR unknown command\r\n")
		}
		if _, err := nc.Write([]byte(b.String())); err != nil {
			return
		}
	}
}

const valkeyInfo = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.1\r\n"

func TestDumpFromFakeServer(t *testing.T) {
	addr := fakeServer(t, valkeyInfo, fakeDocs, fakeInfo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	id, err := Identify(ctx, addr)
	require.NoError(t, err)
	assert.Equal(t, Server{ID: "valkey-8.1.1", RedisVersion: "7.2.4"}, id)

	s, err := Dump(ctx, addr, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"valkey-8.1.1"}, s.Servers)
	require.Len(t, s.Commands, 4)
	assert.Equal(t, []string{"CLIENT", "CLIENT KILL", "GET", "VADD"},
		[]string{s.Commands[0].Name, s.Commands[1].Name, s.Commands[2].Name, s.Commands[3].Name})

	get := s.Lookup("GET")
	assert.Equal(t, Command{
		Name: "GET", Group: "string", Summary: "Returns the value.", Since: "1.0.0", Complexity: "O(1)",
		Arity: 2, Flags: []string{"fast", "readonly"}, ACLCategories: []string{"fast", "read", "string"},
		FirstKey: 1, LastKey: 1, KeyStep: 1,
		KeySpecs: []KeySpec{{
			BeginSearch: BeginSearch{Type: "index", Spec: BeginSearchSpec{Index: 1}},
			FindKeys:    FindKeys{Type: "range", Spec: FindKeysSpec{KeyStep: 1}},
			Flags:       []string{"RO", "access"},
		}},
		Arguments: []Argument{{Name: "key", DisplayText: "key", Type: "key"}},
		Servers:   []string{"valkey-8.1.1"},
	}, *get)

	kill := s.Lookup("CLIENT KILL")
	assert.Equal(t, "CLIENT", kill.Container)
	assert.Equal(t, -3, kill.Arity)
	assert.Equal(t, []string{"admin", "loading", "noscript", "stale"}, kill.Flags)
	assert.Equal(t, []string{"admin", "connection", "dangerous", "slow"}, kill.ACLCategories)
	assert.Equal(t, []string{"nondeterministic_output", "request_policy:all_nodes"}, kill.Tips)
	assert.Equal(t, []string{"syscmd"}, kill.DocFlags)
	assert.Equal(t, []HistoryEntry{{"2.8.12", "Added new filter format."}}, kill.History)
	require.Len(t, kill.Arguments, 1)
	filter := kill.Arguments[0]
	assert.True(t, filter.Optional && filter.Multiple && !filter.MultipleToken)
	assert.Equal(t, Argument{Name: "ip:port", Type: "string", Token: "ADDR", Since: "2.8.12", DeprecatedSince: "9.9.9"}, filter.Arguments[0])
	assert.True(t, filter.Arguments[1].MultipleToken)

	vadd := s.Lookup("VADD")
	assert.Equal(t, "vectorset", vadd.Module)
	assert.Equal(t, "module", vadd.Group)
	assert.Empty(t, vadd.Arguments)

	again, err := Dump(ctx, addr, "custom-1")
	require.NoError(t, err)
	assert.Equal(t, []string{"custom-1"}, again.Lookup("GET").Servers)
}

func TestDumpRejectsUnknownFields(t *testing.T) {
	docs := m("get", m("summary", "x", "group", "string", "reply_shape", "bulk"))
	addr := fakeServer(t, "redis_version:9.0.0\r\n", docs, a(a("get", 2, a(), 1, 1, 1, a(), a(), a(), a())))
	_, err := Dump(context.Background(), addr, "")
	assert.ErrorContains(t, err, `"reply_shape"`)
}

func TestDumpRejectsDocsWithoutInfo(t *testing.T) {
	addr := fakeServer(t, "redis_version:9.0.0\r\n", m("get", m("group", "string")), a())
	_, err := Dump(context.Background(), addr, "")
	assert.ErrorContains(t, err, "get")
}

func TestIdentify(t *testing.T) {
	cases := map[string]string{
		"redis_version:7.0.15\r\n":                      "redis-7.0.15",
		"redis_version:7.2.4\r\nserver_name:valkey\r\n": "valkey-7.2.4",
		valkeyInfo: "valkey-8.1.1",
	}
	for info, want := range cases {
		addr := fakeServer(t, info, nil, nil)
		s, err := Identify(context.Background(), addr)
		require.NoError(t, err)
		assert.Equal(t, want, s.ID)
	}
	addr := fakeServer(t, "# Server\r\n", nil, nil)
	_, err := Identify(context.Background(), addr)
	assert.Error(t, err)
}

func TestDumpHonoursContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc // never answers
		}
		close(accepted)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Dump(ctx, ln.Addr().String(), ""); done <- err }()
	nc := <-accepted
	require.NotNil(t, nc)
	defer nc.Close()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// TestDumpLiveServer runs against a real server when RESPIRE_SPEC_ADDR
// (host:port) is set.
func TestDumpLiveServer(t *testing.T) {
	addr := os.Getenv("RESPIRE_SPEC_ADDR")
	if addr == "" {
		t.Skip("RESPIRE_SPEC_ADDR not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Dump(ctx, addr, "")
	require.NoError(t, err)
	require.NotEmpty(t, s.Commands)

	get := s.Lookup("GET")
	require.NotNil(t, get)
	assert.Contains(t, get.Flags, "readonly")
	require.Len(t, get.KeySpecs, 1)
	assert.Equal(t, 1, get.KeySpecs[0].BeginSearch.Spec.Index)
	require.NotNil(t, s.Lookup("CLIENT KILL"))

	first, err := s.Marshal()
	require.NoError(t, err)
	again, err := Dump(ctx, addr, "")
	require.NoError(t, err)
	second, err := again.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second))
}
