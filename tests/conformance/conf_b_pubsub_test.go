package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/respire"
)

// PUBLISH, SPUBLISH and PUBSUB introspection, first with no subscribers,
// then with one subscription of each kind.
func init() {
	register(Case{
		Name: "B_pubsub",
		Commands: []string{"PUBLISH", "SPUBLISH", "PUBSUB CHANNELS", "PUBSUB HELP", "PUBSUB NUMPAT",
			"PUBSUB NUMSUB", "PUBSUB SHARDCHANNELS", "PUBSUB SHARDNUMSUB"},
		Run: func(e *Env) {
			ch, sch := e.Key("chan"), e.Key("schan")
			pat := e.Key("ch*")

			n, err := e.C.Publish(e.Ctx, ch, "hello")
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			n, err = e.C.SPublish(e.Ctx, sch, "hello")
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			ns, err := e.C.PubSubNumSub(e.Ctx, ch, e.Key("other"))
			require.NoError(e, err)
			require.Equal(e, map[string]int64{ch: 0, e.Key("other"): 0}, ns)
			ns, err = e.C.PubSubNumSub(e.Ctx)
			require.NoError(e, err)
			require.Empty(e, ns)
			ns, err = e.C.PubSubShardNumSub(e.Ctx, sch)
			require.NoError(e, err)
			require.Equal(e, map[string]int64{sch: 0}, ns)
			chans, err := e.C.PubSubChannels(e.Ctx, &respire.PubSubChannelsOptions{Pattern: pat})
			require.NoError(e, err)
			require.Empty(e, chans)
			chans, err = e.C.PubSubShardChannels(e.Ctx, &respire.PubSubShardChannelsOptions{Pattern: e.Key("*")})
			require.NoError(e, err)
			require.Empty(e, chans)
			numPat0, err := e.C.PubSubNumPat(e.Ctx)
			require.NoError(e, err)
			require.GreaterOrEqual(e, numPat0, int64(0))

			sub, err := e.C.Subscribe(e.Ctx, ch)
			require.NoError(e, err)
			defer sub.Close()
			psub, err := e.C.PSubscribe(e.Ctx, pat)
			require.NoError(e, err)
			defer psub.Close()
			ssub, err := e.C.SSubscribe(e.Ctx, sch)
			require.NoError(e, err)
			defer ssub.Close()

			// One channel subscriber and one pattern subscriber receive it.
			n, err = e.C.Publish(e.Ctx, ch, "hello")
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			msg, err := sub.Next(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, ch, msg.Channel)
			require.Equal(e, "hello", msg.Payload)
			n, err = e.C.SPublish(e.Ctx, sch, "shard")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			msg, err = ssub.Next(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, "shard", msg.Payload)

			ns, err = e.C.PubSubNumSub(e.Ctx, ch, e.Key("other"))
			require.NoError(e, err)
			require.Equal(e, map[string]int64{ch: 1, e.Key("other"): 0}, ns)
			ns, err = e.C.PubSubShardNumSub(e.Ctx, sch)
			require.NoError(e, err)
			require.Equal(e, map[string]int64{sch: 1}, ns)
			chans, err = e.C.PubSubChannels(e.Ctx, &respire.PubSubChannelsOptions{Pattern: pat})
			require.NoError(e, err)
			require.Equal(e, []string{ch}, chans)
			chans, err = e.C.PubSubChannels(e.Ctx, nil)
			require.NoError(e, err)
			require.Contains(e, chans, ch)
			chans, err = e.C.PubSubShardChannels(e.Ctx, nil)
			require.NoError(e, err)
			require.Contains(e, chans, sch)
			n, err = e.C.PubSubNumPat(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, numPat0+1, n)

			help, err := e.C.PubSubHelp(e.Ctx)
			require.NoError(e, err)
			require.NotEmpty(e, help)
			require.Contains(e, help[0], "PUBSUB")
		},
	})
}
