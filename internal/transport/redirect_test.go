package transport

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedirectSteps: CLIENT CAPA redirect and READONLY go to a standalone
// Valkey 8 or later only, and only with Config.Redirect.
func TestRedirectSteps(t *testing.T) {
	on := &Config{Redirect: true}
	for _, tc := range []struct {
		server, version, mode string
		want                  bool
	}{
		{"valkey", "8.0.0", "standalone", true},
		{"valkey", "9.1.2", "standalone", true},
		{"valkey", "10.0.0", "standalone", true},
		{"valkey", "7.2.5", "standalone", false},
		{"valkey", "8.1.1", "cluster", false},
		{"valkey", "8.1.1", "sentinel", false},
		{"redis", "8.6.3", "standalone", false},
		{"", "", "", false}, // HELLO refused: nothing known
		{"valkey", "x", "standalone", false},
	} {
		steps := redirectSteps(on, ConnInfo{Server: tc.server, Version: tc.version}, tc.mode)
		assert.Equal(t, tc.want, len(steps) == 2, "%+v", tc)
		for _, s := range steps {
			assert.True(t, s.optional, s.name)
		}
	}
	valkey := ConnInfo{Server: "valkey", Version: "8.1.1"}
	assert.Empty(t, redirectSteps(&Config{}, valkey, "standalone"), "without Config.Redirect")
	assert.Empty(t, redirectSteps(&Config{Redirect: true, ReadOnly: true}, valkey, "standalone"), "a cluster replica connection")
}

// TestSelectError: a refused SELECT names the database and the node, says
// on a cluster which servers allow it, wraps the server's error and stays
// permanent.
func TestSelectError(t *testing.T) {
	se := NewServerError("ERR SELECT is not allowed in cluster mode")
	err := selectError(&Config{DB: 3, Addr: "10.0.0.1:7000", NodeID: "abc"}, "", se)
	assert.Contains(t, err.Error(), "database 3 on cluster node 10.0.0.1:7000")
	assert.Contains(t, err.Error(), "cluster-databases")
	var got *ServerError
	require.True(t, errors.As(err, &got))
	assert.True(t, (&HandshakeError{Step: "SELECT", Err: err}).Permanent())

	err = selectError(&Config{DB: 20, Addr: "h:6379"}, "standalone", NewServerError("ERR DB index is out of range"))
	assert.Equal(t, "database 20 on h:6379: ERR DB index is out of range", err.Error())
}
