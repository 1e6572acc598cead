package respire

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/gen/spec"
	"github.com/respire-go/respire/internal/testpeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redactionForms are the credential-bearing command forms, each with the
// words it must render as. Every secret contains "S3CRET", so that a test
// can look for it in anything rendered.
var redactionForms = []struct {
	name      string
	in, out   []string
	quotedErr bool // the server quotes the arguments in its error (ACL SETUSER)
}{
	{"AUTH password", []string{"AUTH", "S3CRET-a"}, []string{"AUTH", "xxxxx"}, false},
	{"AUTH username password", []string{"auth", "app", "S3CRET-b"}, []string{"auth", "app", "xxxxx"}, false},
	{"AUTH too many", []string{"AUTH", "app", "S3CRET-c", "S3CRET-d"}, []string{"AUTH", "xxxxx", "xxxxx", "xxxxx"}, false},
	{"HELLO AUTH", []string{"HELLO", "3", "AUTH", "app", "S3CRET-e"}, []string{"HELLO", "3", "AUTH", "app", "xxxxx"}, false},
	{"HELLO AUTH SETNAME", []string{"hello", "3", "auth", "app", "S3CRET-f", "setname", "n"},
		[]string{"hello", "3", "auth", "app", "xxxxx", "setname", "n"}, false},
	{"HELLO SETNAME AUTH", []string{"HELLO", "3", "SETNAME", "AUTH", "AUTH", "app", "S3CRET-g"},
		[]string{"HELLO", "3", "SETNAME", "AUTH", "AUTH", "app", "xxxxx"}, false},
	{"HELLO AUTH cut short", []string{"HELLO", "3", "AUTH", "S3CRET-h"}, []string{"HELLO", "3", "AUTH", "xxxxx"}, false},
	{"MIGRATE AUTH", []string{"MIGRATE", "h", "1", "k", "0", "100", "COPY", "REPLACE", "AUTH", "S3CRET-i"},
		[]string{"MIGRATE", "h", "1", "k", "0", "100", "COPY", "REPLACE", "AUTH", "xxxxx"}, false},
	{"MIGRATE AUTH2 KEYS", []string{"migrate", "h", "1", "", "0", "100", "auth2", "app", "S3CRET-j", "KEYS", "a", "AUTH"},
		[]string{"migrate", "h", "1", "", "0", "100", "auth2", "app", "xxxxx", "KEYS", "a", "AUTH"}, false},
	{"MIGRATE AUTH short of an argument", []string{"MIGRATE", "h", "1", "k", "0", "AUTH", "S3CRET-k"},
		[]string{"MIGRATE", "h", "1", "k", "0", "AUTH", "xxxxx"}, false},
	{"CONFIG SET requirepass", []string{"CONFIG", "SET", "requirepass", "S3CRET-l"},
		[]string{"CONFIG", "SET", "requirepass", "xxxxx"}, false},
	{"CONFIG SET several", []string{"config", "set", "maxmemory", "1mb", "MasterAuth", "S3CRET-m", "masteruser", "app",
		"tls-key-file-pass", "S3CRET-n", "tls-client-key-file-pass", "S3CRET-o", "primaryauth", "S3CRET-p"},
		[]string{"config", "set", "maxmemory", "1mb", "MasterAuth", "xxxxx", "masteruser", "app",
			"tls-key-file-pass", "xxxxx", "tls-client-key-file-pass", "xxxxx", "primaryauth", "xxxxx"}, false},
	{"ACL SETUSER rules", []string{"ACL", "SETUSER", "app", "on", ">S3CRET-q", "<S3CRET-r", "#S3CRET-s", "!S3CRET-t",
		"~*", "+@all", "nopass", "resetpass"},
		[]string{"ACL", "SETUSER", "app", "on", ">xxxxx", "<xxxxx", "#xxxxx", "!xxxxx", "~*", "+@all", "nopass", "resetpass"}, true},
	{"ACL SETUSER rules in one argument", []string{"acl", "setuser", "app", "on >S3CRET-u ~*", "(~k >S3CRET-v)"},
		[]string{"acl", "setuser", "app", "xxxxx", "xxxxx"}, true},
	{"SENTINEL SET auth-pass", []string{"SENTINEL", "SET", "mymaster", "quorum", "2", "auth-pass", "S3CRET-w"},
		[]string{"SENTINEL", "SET", "mymaster", "quorum", "2", "auth-pass", "xxxxx"}, false},
	{"SENTINEL CONFIG SET sentinel-pass", []string{"sentinel", "config", "set", "sentinel-user", "app", "SENTINEL-PASS", "S3CRET-x"},
		[]string{"sentinel", "config", "set", "sentinel-user", "app", "SENTINEL-PASS", "xxxxx"}, false},
}

func TestRedactWords(t *testing.T) {
	for _, f := range redactionForms {
		w := append([]string(nil), f.in...)
		assert.True(t, redactWords(w), f.name)
		assert.Equal(t, f.out, w, f.name)
		assert.NotContains(t, strings.Join(w, " "), "S3CRET", f.name)
	}
	// Commands without credentials, and look-alikes, are left alone.
	for _, in := range [][]string{
		{"SET", "AUTH", ">v"}, {"GET", "requirepass"}, {"CONFIG", "SET", "maxmemory", "1"},
		{"CONFIG", "GET", "requirepass"}, {"ACL", "SETUSER", ">name"}, {"SENTINEL", "CONFIG", "GET", "sentinel-pass"},
		{"AUTH"}, {"ACL"}, {"MIGRATE", "h", "1", "", "0", "100", "KEYS", "AUTH", "k"},
	} {
		w := append([]string(nil), in...)
		assert.False(t, redactWords(w), "%q", in)
		assert.Equal(t, in, w)
	}
	// Every traced command is looked up: without allocating.
	get := []string{"get", "k"}
	assert.Zero(t, testing.AllocsPerRun(100, func() { redactWords(get) }))
}

func TestHideSecrets(t *testing.T) {
	msg := "ERR Error in ACL SETUSER modifier '<S3CRET-old': The password you are trying to remove from the user does not exist"
	got := hideSecrets(msg, []string{"ACL", "SETUSER", "app", "<S3CRET-old"})
	assert.Equal(t, "ERR Error in ACL SETUSER modifier '<xxxxx': The password you are trying to remove from the user does not exist", got)
	// A short password is replaced where quoted only, not inside words.
	got = hideSecrets("ERR Error in ACL SETUSER modifier '>r': bad; ERR", []string{"ACL", "SETUSER", "u", ">r"})
	assert.Equal(t, "ERR Error in ACL SETUSER modifier '>xxxxx': bad; ERR", got)
	assert.Equal(t, "ERR x", hideSecrets("ERR x", []string{"GET", "k"}))
}

// TestCommandArgsRedacted: the renderings of CommandArgs hide the
// credentials; Strings keeps the words as sent.
func TestCommandArgsRedacted(t *testing.T) {
	for _, f := range redactionForms {
		x := newCmd(&cmdDo)
		for _, w := range f.in {
			x.arg(w)
		}
		a := commandStart(x, "X").Args
		assert.Equal(t, f.in, a.Strings(), f.name)
		assert.Equal(t, f.out, a.Redacted(), f.name)
		assert.Equal(t, strings.Join(f.out, " "), a.String(), f.name)
		for _, s := range []string{fmt.Sprint(a), fmt.Sprintf("%v %+v %#v %s %q", a, a, a, a, a)} {
			assert.NotContains(t, s, "S3CRET", f.name)
		}
		x.Recycle()
	}
}

// TestRedactionCoversSpecPasswords: every argument of spec/commands.json
// named password (or shown as one) belongs to a form redact.go handles,
// with the token that introduces it. A new server's command with a
// password fails here until the table knows it.
func TestRedactionCoversSpecPasswords(t *testing.T) {
	s, err := spec.Load(filepath.Join("..", "spec", "commands.json"))
	require.NoError(t, err)
	handled := map[string]bool{"AUTH": true, "HELLO AUTH": true, "MIGRATE AUTH": true, "MIGRATE AUTH2": true}
	var found []string
	var walk func(cmd, token string, args []spec.Argument)
	walk = func(cmd, token string, args []spec.Argument) {
		for _, a := range args {
			tok := token
			if a.Token != "" {
				tok = a.Token
			}
			if strings.Contains(strings.ToLower(a.Name+" "+a.DisplayText), "pass") {
				found = append(found, strings.TrimSpace(cmd+" "+tok))
			}
			walk(cmd, tok, a.Arguments)
		}
	}
	for _, c := range s.Commands {
		walk(c.Name, "", c.Arguments)
	}
	sort.Strings(found)
	require.NotEmpty(t, found)
	for _, f := range found {
		assert.True(t, handled[f], "%s: the spec has a password argument there; add its form to redact.go and to redactionForms", f)
		w := strings.Fields(f)
		assert.True(t, redactsName(w[0]), f)
	}
}

// redactPeer answers like a server that quotes ACL SETUSER's rules in its
// error, as Redis and Valkey do, and accepts everything else.
func redactPeer(t *testing.T) *testpeer.Peer {
	return testpeer.Start(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "ACL":
			return "-ERR Error in ACL SETUSER modifier '" + strings.Join(args[3:], "' '") + "': Syntax error\r\n"
		case "MULTI":
			return "+OK\r\n"
		case "EXEC":
			return "-EXECABORT Transaction discarded because of previous errors.\r\n"
		}
		return "+OK\r\n"
	})
}

// TestRedactionRenderingPaths runs every credential-bearing form that a
// shared connection takes through what renders commands: a Tracer, an
// Interceptor (command and batch), the logger, the errors (Do, a typed
// method, a Batch, a Tx). The forms a shared connection refuses (AUTH,
// HELLO) are refused before anything is encoded, so no path sees them.
func TestRedactionRenderingPaths(t *testing.T) {
	p := redactPeer(t)
	var mu sync.Mutex
	var seen []string
	record := func(s ...string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s...)
	}
	var logs bytes.Buffer
	c, err := NewClient(Options{Addr: p.Addr(), NoClientInfo: true,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Tracer: &Tracer{
			CommandStart: func(ctx context.Context, _ *Client, d TraceCommandStartData) context.Context {
				record(d.Args.String(), strings.Join(d.Args.Redacted(), " "), fmt.Sprintf("%v %+v %#v", d.Args, d.Args, d.Args))
				return ctx
			},
			CommandEnd: func(_ context.Context, _ *Client, d TraceCommandEndData) {
				if d.Err != nil {
					record(d.Err.Error())
				}
			},
		},
		Interceptors: []Interceptor{{
			Command: func(ctx context.Context, cmd Command, next CommandFunc) error {
				record(cmd.Args().String())
				err := next(ctx, cmd)
				if err != nil {
					record(err.Error())
				}
				return err
			},
			Batch: func(ctx context.Context, b BatchCall, next BatchFunc) error {
				for i := 0; i < b.Len(); i++ {
					record(b.Command(i).Args().String())
				}
				return next(ctx, b)
			},
		}},
	})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	shared := 0
	for _, f := range redactionForms {
		args := make([]any, len(f.in))
		for i, w := range f.in {
			args[i] = w
		}
		_, err := c.Do(ctx, args...)
		if up := strings.ToUpper(f.in[0]); up == "AUTH" || up == "HELLO" {
			var ae *ArgError
			require.ErrorAs(t, err, &ae, f.name)
			assert.NotContains(t, err.Error(), "S3CRET", f.name)
			continue
		}
		shared++
		if f.quotedErr {
			var se *Error
			require.ErrorAs(t, err, &se, f.name)
			assert.Contains(t, se.Message, "xxxxx", f.name)
		} else {
			require.NoError(t, err, f.name)
		}
		if err != nil {
			assert.NotContains(t, err.Error(), "S3CRET", f.name)
		}
	}
	require.Greater(t, shared, 5)

	// The typed methods render the same way.
	err = c.ACLSetUser(ctx, "app", "on", ">S3CRET-typed", "~*")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "S3CRET")
	require.NoError(t, c.ConfigSet(ctx, ConfigParam{Parameter: "requirepass", Value: "S3CRET-typed2"}))
	_, err = c.Migrate(ctx, "h", 1, "k", 0, 0, &MigrateOptions{Auth2: &MigrateAuth{Username: "app", Password: "S3CRET-typed3"}})
	require.NoError(t, err)

	// A Batch and a Tx: the interceptor's views, and the queued error.
	b := c.NewBatch()
	fb := b.Do("ACL", "SETUSER", "app", ">S3CRET-batch")
	b.ConfigSet(ConfigParam{Parameter: "masterauth", Value: "S3CRET-batch2"})
	require.NoError(t, b.Exec(ctx))
	_, err = fb.Result()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "S3CRET")
	tx := c.NewTx()
	ft := tx.Do("ACL", "SETUSER", "app", "<S3CRET-tx")
	err = tx.Exec(ctx)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "S3CRET")
	_, err = ft.Result()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "S3CRET")

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	all := strings.Join(seen, "\n")
	assert.NotContains(t, all, "S3CRET")
	assert.Contains(t, all, "requirepass xxxxx")
	assert.Contains(t, all, "AUTH2 app xxxxx")
	assert.Contains(t, all, ">xxxxx")
	assert.NotContains(t, logs.String(), "S3CRET")
}

// lockedWriter serialises writes of the logger, which runs on the
// client's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
