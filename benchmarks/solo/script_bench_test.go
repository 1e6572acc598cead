package solo

import (
	"context"
	"testing"

	"github.com/respire-go/respire/respire"
)

var benchScript = respire.NewScript(`return ARGV[1]`)

// BenchmarkScriptRun: Script.Run, whose arguments are ...any as Do's,
// beside the generated EvalSha, whose are ...string; the argument is not a
// constant, so that boxing it would cost an allocation if it escaped.
func BenchmarkScriptRun(b *testing.B) {
	c := client(b, respire.ReadModeDefault)
	ctx := context.Background()
	arg := string([]byte("hello"))
	keys := []string{"bench:script"}
	if _, err := benchScript.Run(ctx, c, keys, arg); err != nil {
		b.Fatal(err)
	}
	check := func(r respire.Reply, err error) {
		if err != nil {
			b.Fatal(err)
		}
		if s, _ := r.Text(); s != arg {
			b.Fatalf("reply %q, want %q", s, arg)
		}
	}
	b.Run("api=Run", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			check(benchScript.Run(ctx, c, keys, arg))
		}
	})
	b.Run("api=EvalSha", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			check(c.EvalSha(ctx, benchScript.Hash(), keys, arg))
		}
	})
}
