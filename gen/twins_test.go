package gen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/gen/spec"
)

// TestMillisTwins checks millisTwins against the real spec both ways: each
// twin takes the same arguments but for the duration, in milliseconds
// there; and every command with a duration in seconds whose "P" twin takes
// it in milliseconds is listed.
func TestMillisTwins(t *testing.T) {
	s, err := spec.Load("../spec/commands.json")
	require.NoError(t, err)
	byName := map[string]*spec.Command{}
	for i := range s.Commands {
		byName[s.Commands[i].Name] = &s.Commands[i]
	}
	shape := func(c *spec.Command) (kinds []scalarKind) {
		for _, a := range buildArgs(c) {
			kinds = append(kinds, a.scalar)
		}
		return kinds
	}
	for name, twin := range millisTwins {
		c, tw := byName[name], byName[twin]
		require.NotNil(t, c, name)
		require.NotNil(t, tw, twin)
		a, b := shape(c), shape(tw)
		require.Equal(t, len(a), len(b), "%s and %s", name, twin)
		for i := range a {
			if a[i] == scSecondsOrTwin {
				assert.Equal(t, scMillis, b[i], "%s's duration is %s's in milliseconds", name, twin)
				continue
			}
			assert.Equal(t, a[i], b[i], "%s and %s argument %d", name, twin, i)
		}
	}
	for name, c := range byName {
		hasSeconds := false
		for _, a := range buildArgs(c) {
			hasSeconds = hasSeconds || a.scalar == scSeconds || a.scalar == scSecondsOrTwin
		}
		if !hasSeconds {
			continue
		}
		// SETEX's twin is PSETEX, HEXPIRE's HPEXPIRE.
		for _, twin := range []string{"P" + name, strings.Replace(name, "EXPIRE", "PEXPIRE", 1)} {
			tw, ok := byName[twin]
			if !ok || twin == name {
				continue
			}
			hasMillis := false
			for _, a := range buildArgs(tw) {
				hasMillis = hasMillis || a.scalar == scMillis
			}
			if hasMillis {
				assert.Equal(t, twin, millisTwins[name], "%s takes seconds and %s milliseconds: list them in millisTwins", name, twin)
			}
		}
	}
}
