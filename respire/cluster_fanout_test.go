package respire

import (
	"context"
	"strings"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/require"
)

// TestMergeErrorNamesNothingTwice: a merge error is wrapped with the
// client's prefix and the command's name by the caller (wrapCluster), so it
// carries neither itself.
func TestMergeErrorNamesNothingTwice(t *testing.T) {
	x := &cmd{info: &cmdInfo{name: "WAITAOF", responsePolicy: "agg_min"}}
	parts := []*part{
		{v: resp.Value{Type: resp.TypeArray, Elems: []resp.Value{{Type: resp.TypeInteger, Int: 1}, {Type: resp.TypeInteger, Int: 1}}}},
		{v: resp.Value{Type: resp.TypeInteger, Int: 3}},
	}
	_, err := merge(x, parts, false)
	require.Error(t, err)
	wrapped := (&Client{}).wrapCluster(context.Background(), "WAITAOF", err)
	require.Equal(t, 1, strings.Count(wrapped.Error(), "respire:"), wrapped.Error())
	require.Equal(t, 1, strings.Count(wrapped.Error(), "WAITAOF"), wrapped.Error())
}
