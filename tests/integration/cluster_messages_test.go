package integration

import (
	"strings"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClusterRefusalMessages: what a cluster refuses says so once and
// names what works there: a Watch across slots names WATCH once, and
// SELECT suggests Options.DB, which this cluster (Redis) refuses at
// Connect, naming the database.
func TestClusterRefusalMessages(t *testing.T) {
	hc := sharedMasters(t, "")
	c := clusterClient(t, hc, respire.Options{})
	ctx := ctxT(t)

	err := c.Watch(ctx, func(tx *respire.Tx) error { return nil }, "msg:a", "msg:b")
	require.Error(t, err)
	assert.ErrorIs(t, err, respire.ErrCrossSlot)
	assert.ErrorIs(t, err, respire.ErrNotSent)
	assert.Equal(t, 1, strings.Count(err.Error(), "WATCH"), err.Error())
	assert.True(t, strings.HasPrefix(err.Error(), "respire: WATCH: "), err.Error())

	_, err = c.Do(ctx, "SELECT", 1)
	var ae *respire.ArgError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, respire.ErrNotSent)
	assert.Contains(t, err.Error(), "set Options.DB")
	assert.Contains(t, err.Error(), "cluster-databases")

	_, err = respire.Connect(ctx, respire.Options{DB: 1, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	var he *respire.HandshakeError
	assert.ErrorAs(t, err, &he, "a Redis cluster refuses Options.DB at Connect")
	assert.ErrorContains(t, err, "database 1")
}
