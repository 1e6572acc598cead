package gen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Methods whose reply is one bulk string read from a key get a Lease and an
// Append form; status replies, aggregates and keyless commands do not.
func TestLeaseForms(t *testing.T) {
	s, r := loadTestdata(t)
	out, err := Generate(Config{SharedSafe: testSharedSafe, Spec: s, Replies: r})
	require.NoError(t, err)
	src := string(out.Files["zz_commands.go"])
	for _, sig := range []string{
		"func (c *Client) GetLease(ctx context.Context, key string) (*Lease, error)",
		"func (c *Client) GetAppend(ctx context.Context, dst []byte, key string) ([]byte, error)",
		"func (c *Client) SetGetAppend(ctx context.Context, dst []byte, key string, value string, opts *SetOptions) ([]byte, error)",
		"return execLease(ctx, c, x, decLeaseNull)",
		"return execAppend(ctx, c, x, dst, decLease)", // XADD: str, never null
	} {
		assert.Contains(t, src, sig)
	}
	for _, name := range []string{"ClientListLease", "HGetAllLease", "SetLease", "ZRangeLease", "PingLease"} {
		assert.NotContains(t, src, ") "+name+"(")
	}
	assert.Contains(t, string(out.Files["zz_batch.go"]), "func (b *Batch) GetLease(key string) *Future[*Lease]")
	assert.Contains(t, string(out.Files["zz_batch.go"]), "return queue(b, x, decLeaseNull, pickLease)")
	assert.NotContains(t, string(out.Files["zz_batch.go"]), "Append(")
	// Each form is one short method: newCmd, the arguments, one exec call.
	i := strings.Index(src, "func (c *Client) GetAppend(")
	body := src[i : i+strings.Index(src[i:], "\n}\n")]
	assert.Equal(t, 3, strings.Count(body, "\n"), body)
}

func TestLeaseFormNamesAreChecked(t *testing.T) {
	s, r := loadTestdata(t)
	g := &generator{cfg: Config{Spec: s, Replies: r}}
	g.methods = []*method{
		{name: "Get", cmd: s.Lookup("GET"), lease: "decLeaseNull"},
		{name: "GetLease", cmd: s.Lookup("GETSET")},
	}
	err := g.checkNames()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GET and GETSET both make a method GetLease")
}
