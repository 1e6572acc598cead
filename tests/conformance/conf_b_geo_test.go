package conformance

import (
	"errors"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

const (
	palermoLon, palermoLat = 13.361389, 38.115556
	cataniaLon, cataniaLat = 15.087269, 37.502669
	// Hashes of the two points as the server stores them (52-bit geohash).
	palermoHash = int64(3479099956230698)
	cataniaHash = int64(3479447370796909)
)

func addSicily(e *Env, k string) {
	e.Helper()
	n, err := e.C.GeoAdd(e.Ctx, k, []respire.GeoMember{
		{Longitude: palermoLon, Latitude: palermoLat, Member: "Palermo"},
		{Longitude: cataniaLon, Latitude: cataniaLat, Member: "Catania"},
	}, nil)
	require.NoError(e, err)
	require.Equal(e, int64(2), n)
}

// checkSicilyLocations checks a WITHCOORD WITHDIST WITHHASH reply of a
// search around (15, 37) in km, sorted ASC.
func checkSicilyLocations(e *Env, locs []respire.GeoLocation) {
	e.Helper()
	require.Len(e, locs, 2)
	require.Equal(e, "Catania", locs[0].Member)
	require.InDelta(e, 56.4413, locs[0].Dist, 0.001)
	require.Equal(e, cataniaHash, locs[0].Hash)
	require.InDelta(e, cataniaLon, locs[0].Coord.Longitude, 1e-5)
	require.InDelta(e, cataniaLat, locs[0].Coord.Latitude, 1e-5)
	require.Equal(e, "Palermo", locs[1].Member)
	require.InDelta(e, 190.4424, locs[1].Dist, 0.001)
	require.Equal(e, palermoHash, locs[1].Hash)
	require.InDelta(e, palermoLon, locs[1].Coord.Longitude, 1e-5)
	require.InDelta(e, palermoLat, locs[1].Coord.Latitude, 1e-5)
}

func init() {
	register(Case{
		Name:     "B_geo_basic",
		Commands: []string{"GEOADD", "GEODIST", "GEOHASH", "GEOPOS"},
		Run: func(e *Env) {
			k := e.Key("g")
			addSicily(e, k)
			n, err := e.C.GeoAdd(e.Ctx, k, []respire.GeoMember{
				{Longitude: 13.5, Latitude: 38.2, Member: "Palermo"},
				{Longitude: 14, Latitude: 37, Member: "Other"},
			}, &respire.GeoAddOptions{Condition: respire.ExistenceNX, CH: true})
			require.NoError(e, err)
			require.Equal(e, int64(1), n)

			d, err := e.C.GeoDist(e.Ctx, k, "Palermo", "Catania", nil)
			require.NoError(e, err)
			require.InDelta(e, 166274.1516, d, 0.01)
			d, err = e.C.GeoDist(e.Ctx, k, "Palermo", "Catania", &respire.GeoDistOptions{Unit: respire.UnitKM})
			require.NoError(e, err)
			require.InDelta(e, 166.2742, d, 0.001)
			d, err = e.C.GeoDist(e.Ctx, k, "Palermo", "Catania", &respire.GeoDistOptions{Unit: respire.UnitMI})
			require.NoError(e, err)
			require.InDelta(e, 103.3182, d, 0.001)
			_, err = e.C.GeoDist(e.Ctx, k, "Palermo", "Nowhere", nil)
			require.True(e, errors.Is(err, respire.Nil), "GEODIST missing member: %v", err)

			h, err := e.C.GeoHash(e.Ctx, k, "Palermo", "Nowhere", "Catania")
			require.NoError(e, err)
			require.Equal(e, []respire.Null[string]{{V: "sqc8b49rny0", Valid: true}, {}, {V: "sqdtr74hyu0", Valid: true}}, h)

			pos, err := e.C.GeoPos(e.Ctx, k, "Palermo", "Nowhere", "Catania")
			require.NoError(e, err)
			require.Len(e, pos, 3)
			require.NotNil(e, pos[0])
			require.InDelta(e, palermoLon, pos[0].Longitude, 1e-5)
			require.InDelta(e, palermoLat, pos[0].Latitude, 1e-5)
			require.Nil(e, pos[1])
			require.NotNil(e, pos[2])
			require.InDelta(e, cataniaLon, pos[2].Longitude, 1e-5)
			require.InDelta(e, cataniaLat, pos[2].Latitude, 1e-5)

			_, err = e.C.GeoAdd(e.Ctx, k, []respire.GeoMember{{Longitude: 200, Latitude: 100, Member: "bad"}}, nil)
			e.ServerError(err, "ERR")
		},
	})

	register(Case{
		Name:     "B_geo_radius",
		Commands: []string{"GEORADIUS", "GEORADIUS_RO", "GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"},
		Run: func(e *Env) {
			k, dst := e.Key("g"), e.Key("dst")
			addSicily(e, k)

			m, err := e.C.GeoRadius(e.Ctx, k, 15, 37, 200, respire.UnitKM, &respire.GeoRadiusOptions{Order: respire.OrderAsc})
			require.NoError(e, err)
			require.Equal(e, []string{"Catania", "Palermo"}, m)
			m, err = e.C.GeoRadius(e.Ctx, k, 15, 37, 100, respire.UnitKM, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"Catania"}, m)
			locs, err := e.C.GeoRadiusLocations(e.Ctx, k, 15, 37, 200, respire.UnitKM, &respire.GeoRadiusLocationsOptions{Order: respire.OrderAsc, WithCoord: true, WithDist: true, WithHash: true})
			require.NoError(e, err)
			checkSicilyLocations(e, locs)
			n, err := e.C.GeoRadiusStore(e.Ctx, k, 15, 37, 200, respire.UnitKM, dst, &respire.GeoRadiusOptions{Count: &respire.GeoCount{Count: 1}, Order: respire.OrderAsc})
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			ws, err := e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.ScoredMember{{Member: "Catania", Score: float64(cataniaHash)}}, ws)
			n, err = e.C.GeoRadiusStoreDist(e.Ctx, k, 15, 37, 200, respire.UnitKM, dst, &respire.GeoRadiusOptions{Order: respire.OrderDesc})
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			ws, err = e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Len(e, ws, 2)
			require.Equal(e, "Catania", ws[0].Member)
			require.InDelta(e, 56.4413, ws[0].Score, 0.001)

			m, err = e.C.GeoRadiusRO(e.Ctx, k, 15, 37, 200, respire.UnitKM, &respire.GeoRadiusROOptions{Order: respire.OrderDesc})
			require.NoError(e, err)
			require.Equal(e, []string{"Palermo", "Catania"}, m)
			locs, err = e.C.GeoRadiusROLocations(e.Ctx, k, 15, 37, 200, respire.UnitKM, &respire.GeoRadiusROLocationsOptions{Order: respire.OrderAsc, WithCoord: true, WithDist: true, WithHash: true})
			require.NoError(e, err)
			checkSicilyLocations(e, locs)

			m, err = e.C.GeoRadiusByMember(e.Ctx, k, "Palermo", 200, respire.UnitKM, &respire.GeoRadiusByMemberOptions{Order: respire.OrderAsc})
			require.NoError(e, err)
			require.Equal(e, []string{"Palermo", "Catania"}, m)
			locs, err = e.C.GeoRadiusByMemberLocations(e.Ctx, k, "Palermo", 200, respire.UnitKM, &respire.GeoRadiusByMemberLocationsOptions{Order: respire.OrderAsc, WithCoord: true, WithDist: true, WithHash: true})
			require.NoError(e, err)
			require.Len(e, locs, 2)
			require.Equal(e, "Palermo", locs[0].Member)
			require.InDelta(e, 0, locs[0].Dist, 0.001)
			require.Equal(e, palermoHash, locs[0].Hash)
			require.Equal(e, "Catania", locs[1].Member)
			require.InDelta(e, 166.2742, locs[1].Dist, 0.001)
			require.InDelta(e, cataniaLat, locs[1].Coord.Latitude, 1e-5)
			n, err = e.C.GeoRadiusByMemberStore(e.Ctx, k, "Palermo", 100, respire.UnitKM, dst, nil)
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			n, err = e.C.GeoRadiusByMemberStoreDist(e.Ctx, k, "Catania", 200, respire.UnitKM, dst, nil)
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			f, err := e.C.ZScore(e.Ctx, dst, "Palermo")
			require.NoError(e, err)
			require.InDelta(e, 166.2742, f, 0.001)

			m, err = e.C.GeoRadiusByMemberRO(e.Ctx, k, "Catania", 10, respire.UnitKM, nil)
			require.NoError(e, err)
			require.Equal(e, []string{"Catania"}, m)
			locs, err = e.C.GeoRadiusByMemberROLocations(e.Ctx, k, "Catania", 200, respire.UnitKM, &respire.GeoRadiusByMemberROLocationsOptions{Order: respire.OrderDesc, WithCoord: true, WithDist: true, WithHash: true})
			require.NoError(e, err)
			require.Len(e, locs, 2)
			require.Equal(e, "Palermo", locs[0].Member)
			require.InDelta(e, 166.2742, locs[0].Dist, 0.001)
			require.Equal(e, cataniaHash, locs[1].Hash)

			_, err = e.C.GeoRadiusByMember(e.Ctx, k, "Nowhere", 10, respire.UnitKM, nil)
			e.ServerError(err, "ERR")
		},
	})

	register(Case{
		Name:     "B_geo_search",
		Commands: []string{"GEOSEARCH", "GEOSEARCHSTORE"},
		Run: func(e *Env) {
			k, dst := e.Key("g"), e.Key("dst")
			addSicily(e, k)
			e.Do("GEOADD", k, "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2")

			from := respire.GeoSearchFrom{FromLonLat: &respire.LonLat{Longitude: 15, Latitude: 37}}
			m, err := e.C.GeoSearch(e.Ctx, k, from, respire.GeoSearchBy{ByRadius: &respire.GeoCircle{Radius: 200, Unit: respire.UnitKM}}, &respire.GeoSearchOptions{Order: respire.OrderAsc})
			require.NoError(e, err)
			require.Equal(e, []string{"Catania", "Palermo"}, m)
			m, err = e.C.GeoSearch(e.Ctx, k, from, respire.GeoSearchBy{ByBox: &respire.GeoBox{Width: 400, Height: 400, Unit: respire.UnitKM}}, &respire.GeoSearchOptions{Order: respire.OrderAsc})
			require.NoError(e, err)
			require.Equal(e, []string{"Catania", "Palermo", "edge2", "edge1"}, m)
			m, err = e.C.GeoSearch(e.Ctx, k, respire.GeoSearchFrom{FromMember: "Palermo"}, respire.GeoSearchBy{ByRadius: &respire.GeoCircle{Radius: 500, Unit: respire.UnitKM}}, &respire.GeoSearchOptions{Order: respire.OrderAsc, Count: &respire.GeoCount{Count: 2}})
			require.NoError(e, err)
			require.Equal(e, []string{"Palermo", "edge1"}, m)

			near := respire.GeoSearchBy{ByRadius: &respire.GeoCircle{Radius: 200, Unit: respire.UnitKM}}
			locs, err := e.C.GeoSearchLocations(e.Ctx, k, from, near, &respire.GeoSearchLocationsOptions{Order: respire.OrderAsc, WithCoord: true, WithDist: true, WithHash: true})
			require.NoError(e, err)
			checkSicilyLocations(e, locs)
			// Each WITH* flag alone or with others: the parts not asked for
			// stay zero.
			all := locs[0]
			for _, c := range []struct {
				opts respire.GeoSearchLocationsOptions
				want respire.GeoLocation
			}{
				{respire.GeoSearchLocationsOptions{}, respire.GeoLocation{Member: all.Member}},
				{respire.GeoSearchLocationsOptions{WithDist: true}, respire.GeoLocation{Member: all.Member, Dist: all.Dist}},
				{respire.GeoSearchLocationsOptions{WithHash: true}, respire.GeoLocation{Member: all.Member, Hash: all.Hash}},
				{respire.GeoSearchLocationsOptions{WithCoord: true}, respire.GeoLocation{Member: all.Member, Coord: all.Coord}},
				{respire.GeoSearchLocationsOptions{WithCoord: true, WithHash: true}, respire.GeoLocation{Member: all.Member, Hash: all.Hash, Coord: all.Coord}},
				{respire.GeoSearchLocationsOptions{WithDist: true, WithCoord: true}, respire.GeoLocation{Member: all.Member, Dist: all.Dist, Coord: all.Coord}},
			} {
				c.opts.Order = respire.OrderAsc
				locs, err = e.C.GeoSearchLocations(e.Ctx, k, from, near, &c.opts)
				require.NoError(e, err)
				require.Len(e, locs, 2)
				require.Equal(e, c.want, locs[0], "%+v", c.opts)
			}

			n, err := e.C.GeoSearchStore(e.Ctx, dst, k, from, respire.GeoSearchBy{ByBox: &respire.GeoBox{Width: 400, Height: 400, Unit: respire.UnitKM}}, &respire.GeoSearchStoreOptions{Order: respire.OrderAsc, Count: &respire.GeoCount{Count: 3, Any: true}})
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			n, err = e.C.GeoSearchStore(e.Ctx, dst, k, from, respire.GeoSearchBy{ByRadius: &respire.GeoCircle{Radius: 200, Unit: respire.UnitKM}}, &respire.GeoSearchStoreOptions{StoreDist: true})
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			ws, err := e.C.ZRangeWithScores(e.Ctx, dst, 0, -1, nil)
			require.NoError(e, err)
			require.Len(e, ws, 2)
			require.Equal(e, "Catania", ws[0].Member)
			require.InDelta(e, 56.4413, ws[0].Score, 0.001)
			require.Equal(e, "Palermo", ws[1].Member)
			require.InDelta(e, 190.4424, ws[1].Score, 0.001)

			m, err = e.C.GeoSearch(e.Ctx, e.Key("none"), from, respire.GeoSearchBy{ByRadius: &respire.GeoCircle{Radius: 1, Unit: respire.UnitM}}, nil)
			require.NoError(e, err)
			require.Empty(e, m)
		},
	})
}
