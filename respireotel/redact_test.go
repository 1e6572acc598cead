package respireotel_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respireotel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueryTextHidesCredentials: with WithQueryText, the spans of the
// credential-bearing commands (ACL SETUSER password rules, CONFIG SET of
// requirepass and masterauth, MIGRATE AUTH and AUTH2) carry the command
// with each credential as xxxxx, in db.query.text and in the error the
// span records (the server quotes ACL SETUSER's rules in its errors).
// Every secret holds "S3CRET": no attribute, event or status of any span
// may contain it.
func TestQueryTextHidesCredentials(t *testing.T) {
	f := newFixture(t, respire.Options{}, respireotel.WithQueryText())
	ctx := context.Background()
	host, port, err := net.SplitHostPort(f.addr)
	require.NoError(t, err)

	_, err = f.c.Do(ctx, "ACL", "SETUSER", "app", "on", ">S3CRET-add", "~*", "+@all")
	require.NoError(t, err)
	require.Error(t, f.c.ACLSetUser(ctx, "app", "<S3CRET-absent"))
	require.NoError(t, f.c.ConfigSet(ctx, respire.ConfigParam{Parameter: "masterauth", Value: "S3CRET-masterauth"}))
	_, err = f.c.Do(ctx, "CONFIG", "SET", "requirepass", "S3CRET-requirepass")
	require.NoError(t, err)
	_, err = f.c.Do(ctx, "CONFIG", "SET", "requirepass", "")
	require.NoError(t, err)
	_, err = f.c.Do(ctx, "MIGRATE", host, port, "absent", 0, 100, "AUTH", "S3CRET-migrate")
	require.NoError(t, err)
	_, err = f.c.Do(ctx, "MIGRATE", host, port, "absent", 0, 100, "AUTH2", "app", "S3CRET-migrate2")
	require.NoError(t, err)

	queries := map[string][]string{}
	for _, s := range f.spans.Ended() {
		var all []string
		for _, kv := range s.Attributes() {
			all = append(all, string(kv.Key)+"="+kv.Value.Emit())
			if kv.Key == "db.query.text" {
				queries[s.Name()] = append(queries[s.Name()], kv.Value.Emit())
			}
		}
		for _, e := range s.Events() {
			all = append(all, e.Name)
			for _, kv := range e.Attributes {
				all = append(all, string(kv.Key)+"="+kv.Value.Emit())
			}
		}
		all = append(all, s.Status().Description)
		for _, a := range all {
			assert.NotContains(t, a, "S3CRET", "span %s", s.Name())
		}
	}
	assert.Equal(t, []string{"ACL SETUSER app on >xxxxx ~* +@all", "ACL SETUSER app <xxxxx"}, queries["ACL SETUSER"])
	assert.Equal(t, []string{"CONFIG SET masterauth xxxxx", "CONFIG SET requirepass xxxxx", "CONFIG SET requirepass xxxxx"},
		queries["CONFIG SET"], "even an empty password shows as xxxxx")
	assert.Equal(t, []string{
		fmt.Sprintf("MIGRATE %s %s absent 0 100 AUTH xxxxx", host, port),
		fmt.Sprintf("MIGRATE %s %s absent 0 100 AUTH2 app xxxxx", host, port),
	}, queries["MIGRATE"])
	var quoted bool
	for _, s := range f.ended("ACL SETUSER") {
		quoted = quoted || strings.Contains(s.Status().Description, "'<xxxxx'")
	}
	assert.True(t, quoted, "the server's error quotes the rule, redacted")
}
