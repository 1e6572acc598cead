package integration

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// TestBadArgumentsNeverReachTheServer: argument errors name the command
// and the argument, and the server sees none of those commands.
func TestBadArgumentsNeverReachTheServer(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	_, err := srv.Do(ctx, "CONFIG", "RESETSTAT")
	require.NoError(t, err)

	ex := 10 * time.Second
	cases := []struct {
		cmd, arg string
		err      error
	}{
		{"SET", "", func() error {
			_, err := c.SetIf(ctx, "k", "v", respire.SetIfCondition{NX: true, XX: true}, nil)
			return err
		}()},
		{"SET", "", c.Set(ctx, "k", "v", &respire.SetOptions{EX: ex, KeepTTL: true})},
		{"DEL", "key", func() error { _, err := c.Del(ctx); return err }()},
		{"BLPOP", "timeout", func() error { _, err := c.BLPop(ctx, -time.Second, "k"); return err }()},
		{"INCRBYFLOAT", "increment", func() error { _, err := c.IncrByFloat(ctx, "k", math.NaN()); return err }()},
		{"GEOSEARCH", "", func() error {
			_, err := c.GeoSearch(ctx, "k", respire.GeoSearchFrom{}, respire.GeoSearchBy{}, nil)
			return err
		}()},
		{"BITCOUNT", "end", func() error { // a unit needs the range's end
			_, err := c.BitCount(ctx, "k", &respire.BitCountOptions{Range: &respire.BitRange{Start: 1, Unit: respire.BitUnitBit}})
			return err
		}()},
	}
	for _, tc := range cases {
		var ae *respire.ArgError
		require.True(t, errors.As(tc.err, &ae), "%s: %v", tc.cmd, tc.err)
		require.Equal(t, tc.cmd, ae.Command)
		require.Contains(t, tc.err.Error(), tc.cmd)
		require.NotEmpty(t, ae.Argument)
		if tc.arg != "" {
			require.Equal(t, tc.arg, ae.Argument, tc.err.Error())
		}
	}
	v, err := srv.Do(ctx, "INFO", "commandstats")
	require.NoError(t, err)
	stats := fmt.Sprint(v)
	for _, name := range []string{"set", "del", "blpop", "incrbyfloat", "geosearch", "bitcount"} {
		require.False(t, strings.Contains(stats, "cmdstat_"+name+":"), "%s reached the server:\n%s", name, stats)
	}
}

// TestUnsupportedCommand: a command the connected server lacks (by the
// spec) fails before sending, naming the command and the server.
func TestUnsupportedCommand(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis70})
	for _, proto := range []int{2, 3} {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		_, err := c.HGetDel(ctxT(t), "h", "f")
		require.ErrorIs(t, err, respire.ErrUnsupported)
		var ue *respire.UnsupportedError
		require.ErrorAs(t, err, &ue)
		require.Equal(t, "HGETDEL", ue.Command)
		require.Contains(t, err.Error(), "7.0.15")
		require.Contains(t, err.Error(), "redis 8.0")
	}
}
