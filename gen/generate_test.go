package gen

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/gen/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testSharedSafe is the reviewed list, plus CLIENT NO-EVICT, which the
// test spec keeps as a method for its ON|OFF argument.
var testSharedSafe = func() map[string]string {
	m := maps.Clone(reviewedSharedSafe)
	m["CLIENT NO-EVICT"] = "kept in the test spec for its ON|OFF argument"
	return m
}()

// TestConnStateDecided: a command the spec marks as dealing with
// connections gets no method unless it is refused or reviewed, and a
// reviewed entry must name such a command.
func TestConnStateDecided(t *testing.T) {
	s, r := loadTestdata(t)
	_, err := Generate(Config{Spec: s, Replies: r})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CLIENT NO-EVICT: the spec marks it as dealing with connections (ACL category @connection)")
	assert.Contains(t, err.Error(), "reviewedSharedSafe in gen/connstate.go")

	stale := maps.Clone(testSharedSafe)
	stale["GET"] = "not a connection command"
	_, err = Generate(Config{SharedSafe: stale, Spec: s, Replies: r})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lists GET, which is excluded or not marked by the spec as dealing with connections")

	// An exclusion decides it too; a setup one is listed as such.
	full, err := ParseReplies("r", strings.Replace(mustRead(t, "testdata/replies.txt"),
		"CLIENT NO-EVICT: ok", "CLIENT NO-EVICT: - [setup] exempts the connection from eviction", 1))
	require.NoError(t, err)
	out, err := Generate(Config{Spec: s, Replies: full})
	require.NoError(t, err)
	assert.Contains(t, string(out.Files["zz_excluded.md"]), "| `CLIENT NO-EVICT` | connection | *setup*: exempts the connection from eviction |")
	assert.Contains(t, string(out.Files["zz_commands.go"]), `"CLIENT NO-EVICT": true`)
	assert.Contains(t, string(out.Files["zz_excluded.md"]), "| `CLIENT KILL` | closes other connections")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func loadTestdata(t *testing.T) (*spec.Spec, *Replies) {
	t.Helper()
	s, err := spec.Load("testdata/commands.json")
	require.NoError(t, err)
	r, err := LoadReplies("testdata/replies.txt")
	require.NoError(t, err)
	return s, r
}

func loadTestSupplement(t *testing.T) *Supplement {
	t.Helper()
	sup, err := LoadSupplement("testdata/supplement.json")
	require.NoError(t, err)
	return sup
}

// TestGolden generates from testdata/commands.json and testdata/replies.txt
// and compares with testdata/golden. Run with -update after an intended
// change and review the diff.
func TestGolden(t *testing.T) {
	s, r := loadTestdata(t)
	out, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r, Supplement: loadTestSupplement(t)})
	require.NoError(t, err)
	dir := filepath.Join("testdata", "golden")
	if *update {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for name, data := range out.Files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name+".golden"), data, 0o644))
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var golden []string
	for _, e := range entries {
		golden = append(golden, strings.TrimSuffix(e.Name(), ".golden"))
	}
	var got []string
	for name := range out.Files {
		got = append(got, name)
	}
	sort.Strings(got)
	assert.Equal(t, golden, got, "generated file names")
	for _, name := range got {
		want, err := os.ReadFile(filepath.Join(dir, name+".golden"))
		if !assert.NoError(t, err) {
			continue
		}
		assert.Equal(t, string(want), string(out.Files[name]), "%s differs from its golden file; run go test ./gen -update and review the diff", name)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	s, r := loadTestdata(t)
	a, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r})
	require.NoError(t, err)
	for range 3 {
		b, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r})
		require.NoError(t, err)
		assert.Equal(t, a.Files, b.Files)
	}
}

func TestGenerateRefusesMissingReplies(t *testing.T) {
	s, r := loadTestdata(t)
	delete(r.Entries, "GET")
	delete(r.Entries, "CLIENT LIST")
	_, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r})
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, []string{"CLIENT LIST", "GET"}, missing.Commands)
	assert.Contains(t, err.Error(), "CLIENT LIST, GET")

	// The container CLIENT needs no entry: it is not callable alone.
	assert.NotContains(t, missing.Commands, "CLIENT")

	out, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r, AllowMissing: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"CLIENT LIST", "GET"}, out.Skipped)
	assert.NotContains(t, string(out.Files["zz_commands.go"]), ") Get(")
}

func TestGenerateRejectsBadEntries(t *testing.T) {
	s, _ := loadTestdata(t)
	for _, c := range []struct{ extra, want string }{
		{"NOSUCHCMD: int", "replies.txt:1: NOSUCHCMD is not a command of the spec"},
		{"GETX: int ; NOPE => int", "not a command"},
	} {
		r, err := ParseReplies("replies.txt", c.extra)
		require.NoError(t, err)
		full, err := LoadReplies("testdata/replies.txt")
		require.NoError(t, err)
		for k, v := range r.Entries {
			full.Entries[k] = v
		}
		_, err = Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: full})
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	full, err := LoadReplies("testdata/replies.txt")
	require.NoError(t, err)
	full.Entries["ZRANGE"].Variants[0].Selectors = []string{"WITHSCOREZ"}
	_, err = Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: full})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ZRANGE: variant WITHSCOREZ: no argument has the token or name "WITHSCOREZ"`)
}

func TestVariantShapes(t *testing.T) {
	s, r := loadTestdata(t)
	out, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r, Supplement: loadTestSupplement(t)})
	require.NoError(t, err)
	src := string(out.Files["zz_commands.go"])
	for _, sig := range []string{
		"func (c *Client) Get(ctx context.Context, key string) (string, error)",
		"func (c *Client) Set(ctx context.Context, key string, value string, opts *SetOptions) (bool, error)",
		"func (c *Client) SetGet(ctx context.Context, key string, value string, opts *SetOptions) (string, error)",
		"func (c *Client) ZRangeWithScores(ctx context.Context, key string, start int64, stop int64, opts *ZRangeOptions) ([]ScoredMember, error)",
		"func (c *Client) ZRangeBy(ctx context.Context, key string, start string, stop string, sortBy SortBy, opts *ZRangeOptions) ([]string, error)",
		"func (c *Client) ZAdd(ctx context.Context, key string, data []ScoredMember, opts *ZAddOptions) (int64, error)",
		"func (c *Client) BLPop(ctx context.Context, timeout time.Duration, keys ...string) (KeyElement, error)",
		"func (c *Client) Eval(ctx context.Context, script string, keys []string, args ...any) (Reply, error)",
		"func (c *Client) ClientKillOldFormat(ctx context.Context, oldFormat string) error",
		"func (c *Client) ClientNoEvict(ctx context.Context, enabled bool) error",
		"func (c *Client) MGet(ctx context.Context, keys ...string) ([]Null[string], error)",
		"func (c *Client) XAdd(ctx context.Context, key string, id string, data []FieldValue, opts *XAddOptions) (string, error)",
		"func (c *Client) LMove(ctx context.Context, source string, destination string, whereFrom Side, whereTo Side) (string, error)",
	} {
		assert.True(t, strings.Contains(src, sig), "missing %s", sig)
	}
	// GET is neither a parameter nor an option of Set: the variant owns it.
	types := string(out.Files["zz_types.go"])
	assert.NotContains(t, types, "\tGet bool")
	assert.Contains(t, string(out.Files["zz_batch.go"]), "func (b *Batch) SetGet(key string, value string, opts *SetOptions) *Future[string]")
	assert.Contains(t, string(out.Files["zz_excluded.md"]), "| `SUBSCRIBE` | pubsub | puts the connection in subscriber mode |")
}

// TestOptionalTupleKinds: the optional fields of a tuple are told apart by
// their kind of reply, so two of one kind are refused.
func TestOptionalTupleKinds(t *testing.T) {
	s, _ := loadTestdata(t)
	for _, c := range []struct{ reply, want string }{
		{"GEOSEARCH: [str] ; [WITHDIST] as GeoSearchLocations => [(member:str, dist?:float, hash?:int)]", ""},
		{"GEOSEARCH: [str] ; [WITHDIST] as GeoSearchLocations => [(member:str, dist?:float, name?:str)]", "optional fields dist and name are the same kind of reply"},
	} {
		full, err := LoadReplies("testdata/replies.txt")
		require.NoError(t, err)
		r, err := ParseReplies("replies.txt", c.reply)
		require.NoError(t, err)
		full.Entries["GEOSEARCH"] = r.Entries["GEOSEARCH"]
		out, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: full})
		if c.want != "" {
			assert.ErrorContains(t, err, c.want)
			continue
		}
		require.NoError(t, err)
		assert.Contains(t, string(out.Files["zz_decoders.go"]), "readLooseTuple(m, i, fieldsGeoSearchLocationsReplyItem)")
		assert.Contains(t, string(out.Files["zz_decoders.go"]), "readList(m, i, rdGeoSearchLocationsReplyItem)", "never read as flattened")
		assert.Contains(t, string(out.Files["zz_types.go"]), "WithDist bool")
	}
}
