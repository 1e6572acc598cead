package conformance

import (
	"time"

	"github.com/stretchr/testify/require"
)

// An example of the form every case file follows.
func init() {
	register(Case{
		Commands: []string{"SET", "GET", "INCR"},
		Run: func(e *Env) {
			k := e.Key("s")
			require.NoError(e, e.C.Set(e.Ctx, k, "10", nil))
			v, err := e.C.Get(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, "10", v)
			n, err := e.C.Incr(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(11), n)
			_ = time.Second
		},
	})
}
