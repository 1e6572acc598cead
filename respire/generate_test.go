package respire

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/gen"
	"github.com/respire-go/respire/gen/spec"
)

// TestGeneratedFilesAreCurrent regenerates the zz_ files in memory and
// fails when the committed ones differ: the spec, the reply notation or the
// generator changed without "go generate ./...".
func TestGeneratedFilesAreCurrent(t *testing.T) {
	s, err := spec.Load(filepath.Join("..", "spec", "commands.json"))
	require.NoError(t, err)
	r, err := gen.LoadReplies(filepath.Join("..", "spec", "replies.txt"))
	require.NoError(t, err)
	sup, err := gen.LoadSupplement(filepath.Join("..", "spec", "supplement.json"))
	require.NoError(t, err)
	out, err := gen.Generate(gen.Config{Spec: s, Replies: r, Supplement: sup})
	require.NoError(t, err, "the generator refuses the spec; fix it, then run go generate ./...")

	have, err := filepath.Glob("zz_*")
	require.NoError(t, err)
	var want []string
	for name := range out.Files {
		want = append(want, name)
	}
	sort.Strings(want)
	var haveGen []string
	for _, p := range have {
		if filepath.Ext(p) != ".go" || !isTest(p) {
			haveGen = append(haveGen, p)
		}
	}
	assert.Equal(t, want, haveGen, "the set of generated files changed: run go generate ./...")
	for _, name := range want {
		cur, err := os.ReadFile(name)
		if !assert.NoError(t, err, "run go generate ./...") {
			continue
		}
		assert.True(t, string(cur) == string(out.Files[name]), "%s is stale: run go generate ./...", name)
	}
}

func isTest(name string) bool {
	return len(name) > len("_test.go") && name[len(name)-len("_test.go"):] == "_test.go"
}
