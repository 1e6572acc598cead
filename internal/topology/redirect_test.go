package topology

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRedirect: the error replies that ask for a command again, among
// them those atomic slot migration gives (Valkey 9 CLUSTER MIGRATESLOTS,
// Redis 8.4+ CLUSTER MIGRATION): a MOVED once the slot is handed over, and
// Redis's TRYAGAIN while a node deletes the keys of a slot it gave away or
// failed to import.
func TestParseRedirect(t *testing.T) {
	cases := []struct {
		message, from string
		want          Redirect
		ok            bool
	}{
		{"MOVED 3999 127.0.0.1:6381", "127.0.0.1:6379", Redirect{Moved, 3999, "127.0.0.1:6381"}, true},
		{"ASK 3999 10.0.0.2:7000", "127.0.0.1:6379", Redirect{Ask, 3999, "10.0.0.2:7000"}, true},
		// An empty host is the replying node's.
		{"MOVED 1 :6390", "10.1.2.3:6379", Redirect{Moved, 1, "10.1.2.3:6390"}, true},
		{"MOVED 0 [::1]:6390", "[::1]:6379", Redirect{Moved, 0, "[::1]:6390"}, true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", "a:1", Redirect{Kind: TryAgain}, true},
		{"TRYAGAIN Slot is being trimmed", "a:1", Redirect{Kind: TryAgain}, true},
		{"CLUSTERDOWN The cluster is down", "a:1", Redirect{Kind: ClusterDown}, true},
		{"CLUSTERDOWN Hash slot not served", "a:1", Redirect{Kind: ClusterDown}, true},
		{"LOADING Redis is loading the dataset in memory", "a:1", Redirect{Kind: Loading}, true},
		{"MASTERDOWN Link with MASTER is down", "a:1", Redirect{Kind: MasterDown}, true},
		// Malformed redirects and other errors are the command's own reply.
		{"MOVED 16384 127.0.0.1:6381", "a:1", Redirect{}, false},
		{"MOVED -1 127.0.0.1:6381", "a:1", Redirect{}, false},
		{"MOVED x 127.0.0.1:6381", "a:1", Redirect{}, false},
		{"MOVED 12", "a:1", Redirect{}, false},
		{"ERR unknown command", "a:1", Redirect{}, false},
		{"READONLY You can't write against a read only replica.", "a:1", Redirect{}, false},
	}
	for _, tc := range cases {
		prefix, _, _ := strings.Cut(tc.message, " ")
		got, ok := ParseRedirect(prefix, tc.message, tc.from)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseRedirect(%q, from %s) = %+v, %v; want %+v, %v", tc.message, tc.from, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRedirectKindNames: each kind prints as its error prefix, and only
// MOVED and ASK send the command elsewhere.
func TestRedirectKindNames(t *testing.T) {
	for k, want := range map[RedirectKind]string{Moved: "MOVED", Ask: "ASK", TryAgain: "TRYAGAIN", ClusterDown: "CLUSTERDOWN", Loading: "LOADING", MasterDown: "MASTERDOWN", 0: "RedirectKind(0)", 99: "RedirectKind(99)"} {
		assert.Equal(t, want, k.String())
		rd, ok := ParseRedirect(want, want+" 1 h:1", "x:1")
		if k == 0 || k == 99 {
			assert.False(t, ok)
			continue
		}
		require.True(t, ok, want)
		assert.Equal(t, k, rd.Kind)
		assert.Equal(t, k == Moved || k == Ask, k.Follow())
	}
}
