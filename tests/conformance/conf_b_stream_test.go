package conformance

import (
	"errors"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

func fv(pairs ...string) []respire.FieldValue {
	out := make([]respire.FieldValue, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, respire.FieldValue{Field: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func dur(d time.Duration) *time.Duration { return &d }

func init() {
	register(Case{
		Name: "B_stream_basic",
		Commands: []string{"XADD", "XLEN", "XRANGE", "XREVRANGE", "XDEL", "XTRIM", "XSETID",
			"XINFO STREAM", "XINFO HELP", "XREAD"},
		Run: func(e *Env) {
			k := e.Key("s")
			id, err := e.C.XAdd(e.Ctx, k, "1-1", fv("a", "1", "b", "2"), nil)
			require.NoError(e, err)
			require.Equal(e, "1-1", id)
			id, err = e.C.XAdd(e.Ctx, k, "2-0", fv("c", "3"), nil)
			require.NoError(e, err)
			require.Equal(e, "2-0", id)
			id, err = e.C.XAdd(e.Ctx, k, "", fv("d", "4"), nil)
			require.NoError(e, err)
			require.Regexp(e, `^\d+-\d+$`, id)
			autoID := id
			id, err = e.C.XAddNoMkStream(e.Ctx, e.Key("none"), "", fv("x", "y"), nil)
			require.True(e, errors.Is(err, respire.Nil), "XADD NOMKSTREAM on missing key: %q %v", id, err)
			_, err = e.C.XAdd(e.Ctx, k, "1-0", fv("x", "y"), nil)
			e.ServerError(err, "ERR")

			n, err := e.C.XLen(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)

			want := []respire.StreamEntry{
				{ID: "1-1", Fields: fv("a", "1", "b", "2")},
				{ID: "2-0", Fields: fv("c", "3")},
				{ID: autoID, Fields: fv("d", "4")},
			}
			r, err := e.C.XRange(e.Ctx, k, "-", "+", nil)
			require.NoError(e, err)
			require.Equal(e, want, r)
			r, err = e.C.XRange(e.Ctx, k, "(1-1", "+", &respire.XRangeOptions{Count: 1})
			require.NoError(e, err)
			require.Equal(e, want[1:2], r)
			r, err = e.C.XRevRange(e.Ctx, k, "+", "-", &respire.XRevRangeOptions{Count: 2})
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntry{want[2], want[1]}, r)
			r, err = e.C.XRevRange(e.Ctx, k, "1-1", "-", nil)
			require.NoError(e, err)
			require.Equal(e, want[:1], r)

			rd, err := e.C.XRead(e.Ctx, []string{k}, []string{"1-1"}, &respire.XReadOptions{Count: 5})
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: want[1:]}}, rd)
			k2 := e.Key("s2")
			e.Do("XADD", k2, "5-0", "z", "26")
			rd, err = e.C.XRead(e.Ctx, []string{k, k2}, []string{autoID, "0"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k2, Entries: []respire.StreamEntry{{ID: "5-0", Fields: fv("z", "26")}}}}, rd)
			rd, err = e.C.XRead(e.Ctx, []string{k, k2}, []string{"2-0", "0-0"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: want[2:]}, {Stream: k2, Entries: []respire.StreamEntry{{ID: "5-0", Fields: fv("z", "26")}}}}, rd)
			// Streams come in the order asked for, which a map would lose.
			rd, err = e.C.XRead(e.Ctx, []string{k2, k}, []string{"0-0", "2-0"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k2, Entries: []respire.StreamEntry{{ID: "5-0", Fields: fv("z", "26")}}},
				{Stream: k, Entries: want[2:]}}, rd)
			// Data present: BLOCK returns at once.
			rd, err = e.C.XRead(e.Ctx, []string{k}, []string{"0"}, &respire.XReadOptions{Count: 1, Block: dur(time.Second)})
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: want[:1]}}, rd)
			// Nothing new: a null reply.
			_, err = e.C.XRead(e.Ctx, []string{k}, []string{autoID}, nil)
			require.True(e, errors.Is(err, respire.Nil), "XREAD nothing new: %v", err)
			_, err = e.C.XRead(e.Ctx, []string{k}, []string{"$"}, &respire.XReadOptions{Block: dur(10 * time.Millisecond)})
			require.True(e, errors.Is(err, respire.Nil), "XREAD BLOCK timeout: %v", err)

			info, err := e.C.XInfoStream(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), info.Length)
			require.Equal(e, autoID, info.LastGeneratedID)
			require.Equal(e, "0-0", info.MaxDeletedEntryID)
			require.Equal(e, int64(3), info.EntriesAdded)
			require.Equal(e, "1-1", info.RecordedFirstEntryID)
			require.Equal(e, int64(0), info.Groups)
			require.Greater(e, info.RadixTreeKeys, int64(0))
			require.Greater(e, info.RadixTreeNodes, int64(0))
			require.NotNil(e, info.FirstEntry)
			require.Equal(e, want[0], *info.FirstEntry)
			require.NotNil(e, info.LastEntry)
			require.Equal(e, want[2], *info.LastEntry)

			n, err = e.C.XDel(e.Ctx, k, "2-0", "9-9")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			n, err = e.C.XTrim(e.Ctx, k, respire.TrimStrategyMaxLen, "1", &respire.XTrimOptions{Equal: true})
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			n, err = e.C.XTrim(e.Ctx, k, respire.TrimStrategyMinID, "0-1", nil)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)

			// XADD with trimming.
			k5 := e.Key("s5")
			for i := 1; i <= 3; i++ {
				_, err = e.C.XAdd(e.Ctx, k5, "", fv("i", "x"), &respire.XAddOptions{Trim: &respire.Trim{Strategy: respire.TrimStrategyMaxLen, Equal: true, Threshold: "2"}})
				require.NoError(e, err)
			}
			n, err = e.C.XLen(e.Ctx, k5)
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			_, err = e.C.XAdd(e.Ctx, k5, "", fv("i", "y"), &respire.XAddOptions{Trim: &respire.Trim{Strategy: respire.TrimStrategyMinID, Approximately: true, Threshold: "0-1", Limit: i64(10)}})
			require.NoError(e, err)
			n, err = e.C.XTrim(e.Ctx, k5, respire.TrimStrategyMaxLen, "0", &respire.XTrimOptions{Approximately: true, Limit: i64(100)})
			require.NoError(e, err)
			require.Equal(e, int64(3), n) // the one macro node goes as a whole

			require.NoError(e, e.C.XSetID(e.Ctx, k, "99999999999999-5", &respire.XSetIDOptions{EntriesAdded: i64(10), MaxDeletedID: "2-0"}))
			info, err = e.C.XInfoStream(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(1), info.Length)
			require.Equal(e, "99999999999999-5", info.LastGeneratedID)
			require.Equal(e, "2-0", info.MaxDeletedEntryID)
			require.Equal(e, int64(10), info.EntriesAdded)
			require.Equal(e, autoID, info.RecordedFirstEntryID)
			require.Equal(e, want[2], *info.FirstEntry)
			err = e.C.XSetID(e.Ctx, k, "1-0", nil)
			e.ServerError(err, "ERR")

			full, err := e.C.XInfoStreamFull(e.Ctx, k, &respire.XInfoStreamFullOptions{Count: i64(10)})
			require.NoError(e, err)
			require.Equal(e, int64(1), full.Length)
			require.Equal(e, "99999999999999-5", full.LastGeneratedID)
			require.Equal(e, []respire.StreamEntry{want[2]}, full.Entries)
			require.Empty(e, full.Groups)

			e.Do("DEL", k)
			info, err = e.C.XInfoStream(e.Ctx, k2)
			require.NoError(e, err)
			require.Equal(e, int64(1), info.Length)
			_, err = e.C.XInfoStream(e.Ctx, k)
			e.ServerError(err, "ERR")

			// An empty stream: first and last entries are null.
			k3 := e.Key("s3")
			e.Do("XADD", k3, "1-0", "a", "1")
			e.Do("XDEL", k3, "1-0")
			info, err = e.C.XInfoStream(e.Ctx, k3)
			require.NoError(e, err)
			require.Equal(e, int64(0), info.Length)
			require.Equal(e, "1-0", info.MaxDeletedEntryID)
			require.Equal(e, "0-0", info.RecordedFirstEntryID)
			require.Nil(e, info.FirstEntry)
			require.Nil(e, info.LastEntry)
			r, err = e.C.XRange(e.Ctx, k3, "-", "+", nil)
			require.NoError(e, err)
			require.Empty(e, r)

			help, err := e.C.XInfoHelp(e.Ctx)
			require.NoError(e, err)
			require.NotEmpty(e, help)
			require.Contains(e, help[0], "XINFO")
		},
	})

	register(Case{
		Name: "B_stream_groups",
		Commands: []string{"XGROUP CREATE", "XGROUP CREATECONSUMER", "XGROUP DELCONSUMER", "XGROUP DESTROY",
			"XGROUP HELP", "XGROUP SETID", "XINFO GROUPS", "XINFO CONSUMERS", "XREADGROUP", "XACK",
			"XPENDING", "XCLAIM", "XAUTOCLAIM"},
		Run: func(e *Env) {
			k := e.Key("s")
			require.NoError(e, e.C.XGroupCreate(e.Ctx, k, "g", "0", &respire.XGroupCreateOptions{MkStream: true}))
			err := e.C.XGroupCreate(e.Ctx, k, "g", "0", nil)
			e.ServerError(err, "BUSYGROUP")
			require.NoError(e, e.C.XGroupCreate(e.Ctx, k, "g2", "", nil))
			e.Do("XADD", k, "1-0", "a", "1")
			e.Do("XADD", k, "2-0", "b", "2")
			e.Do("XADD", k, "3-0", "c", "3")
			all := []respire.StreamEntry{
				{ID: "1-0", Fields: fv("a", "1")},
				{ID: "2-0", Fields: fv("b", "2")},
				{ID: "3-0", Fields: fv("c", "3")},
			}

			ok, err := e.C.XGroupCreateConsumer(e.Ctx, k, "g", "alice")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.XGroupCreateConsumer(e.Ctx, k, "g", "alice")
			require.NoError(e, err)
			require.False(e, ok)

			rd, err := e.C.XReadGroup(e.Ctx, "g", "alice", []string{k}, []string{">"}, &respire.XReadGroupOptions{Count: 2})
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: all[:2]}}, rd)
			rd, err = e.C.XReadGroup(e.Ctx, "g", "bob", []string{k}, []string{">"}, &respire.XReadGroupOptions{Block: dur(time.Second)})
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: all[2:]}}, rd)
			// History of alice's pending entries.
			rd, err = e.C.XReadGroup(e.Ctx, "g", "alice", []string{k}, []string{"0"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: all[:2]}}, rd)
			_, err = e.C.XReadGroup(e.Ctx, "g", "alice", []string{k}, []string{">"}, &respire.XReadGroupOptions{Block: dur(10 * time.Millisecond)})
			require.True(e, errors.Is(err, respire.Nil), "XREADGROUP BLOCK timeout: %v", err)
			rd, err = e.C.XReadGroup(e.Ctx, "g2", "carol", []string{k}, []string{">"}, &respire.XReadGroupOptions{NoAck: true, Count: 1})
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k, Entries: all[:1]}}, rd)

			ps, err := e.C.XPending(e.Ctx, k, "g")
			require.NoError(e, err)
			require.Equal(e, respire.XPendingSummary{
				Count: 3,
				Min:   respire.Null[string]{V: "1-0", Valid: true},
				Max:   respire.Null[string]{V: "3-0", Valid: true},
				Consumers: []respire.XPendingConsumer{
					{Name: "alice", Count: 2}, {Name: "bob", Count: 1},
				},
			}, ps)
			ps, err = e.C.XPending(e.Ctx, k, "g2")
			require.NoError(e, err)
			require.Equal(e, int64(0), ps.Count)
			require.False(e, ps.Min.Valid)
			require.False(e, ps.Max.Valid)
			require.Empty(e, ps.Consumers)

			pe, err := e.C.XPendingExt(e.Ctx, k, "g", "-", "+", 10, nil)
			require.NoError(e, err)
			require.Len(e, pe, 3)
			for i, want := range []struct {
				id, consumer string
			}{{"1-0", "alice"}, {"2-0", "alice"}, {"3-0", "bob"}} {
				require.Equal(e, want.id, pe[i].ID)
				require.Equal(e, want.consumer, pe[i].Consumer)
				require.GreaterOrEqual(e, pe[i].Idle, int64(0))
			}
			require.Equal(e, int64(2), pe[0].Deliveries) // read by ">" then again by "0"
			require.Equal(e, int64(1), pe[2].Deliveries)
			pe, err = e.C.XPendingExt(e.Ctx, k, "g", "-", "+", 10, &respire.XPendingExtOptions{Idle: 0, Consumer: "bob"})
			require.NoError(e, err)
			require.Len(e, pe, 1)
			require.Equal(e, "3-0", pe[0].ID)

			n, err := e.C.XAck(e.Ctx, k, "g", "1-0", "9-0")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)

			cl, err := e.C.XClaim(e.Ctx, k, "g", "bob", 0, []string{"2-0"}, nil)
			require.NoError(e, err)
			require.Equal(e, all[1:2], cl)
			ids, err := e.C.XClaimJustID(e.Ctx, k, "g", "alice", 0, []string{"2-0", "3-0"}, &respire.XClaimOptions{RetryCount: i64(5)})
			require.NoError(e, err)
			require.Equal(e, []string{"2-0", "3-0"}, ids)
			// IDLE sets the idle time of the claimed entry.
			cl, err = e.C.XClaim(e.Ctx, k, "g", "alice", 0, []string{"3-0"}, &respire.XClaimOptions{Idle: time.Hour})
			require.NoError(e, err)
			require.Equal(e, all[2:], cl)
			pe, err = e.C.XPendingExt(e.Ctx, k, "g", "3-0", "3-0", 1, nil)
			require.NoError(e, err)
			require.Len(e, pe, 1)
			require.InDelta(e, 3600000, pe[0].Idle, 5000)
			cl, err = e.C.XClaim(e.Ctx, k, "g", "bob", time.Hour, []string{"2-0"}, nil)
			require.NoError(e, err)
			require.Empty(e, cl)

			ac, err := e.C.XAutoClaim(e.Ctx, k, "g", "bob", 0, "0-0", &respire.XAutoClaimOptions{Count: 1})
			require.NoError(e, err)
			require.Equal(e, "3-0", ac.Next)
			require.Equal(e, all[1:2], ac.Entries)
			require.Empty(e, ac.Deleted)
			aci, err := e.C.XAutoClaimJustID(e.Ctx, k, "g", "bob", 0, ac.Next, nil)
			require.NoError(e, err)
			require.Equal(e, "0-0", aci.Next)
			require.Equal(e, []string{"3-0"}, aci.IDs)
			require.Empty(e, aci.Deleted)

			groups, err := e.C.XInfoGroups(e.Ctx, k)
			require.NoError(e, err)
			require.Len(e, groups, 2)
			require.Equal(e, "g", groups[0].Name)
			require.Equal(e, int64(2), groups[0].Consumers)
			require.Equal(e, int64(2), groups[0].Pending)
			require.Equal(e, "3-0", groups[0].LastDeliveredID)
			require.Equal(e, respire.Null[int64]{V: 3, Valid: true}, groups[0].EntriesRead)
			require.Equal(e, respire.Null[int64]{V: 0, Valid: true}, groups[0].Lag)
			require.Equal(e, "g2", groups[1].Name)
			require.Equal(e, int64(1), groups[1].Consumers)
			require.Equal(e, int64(0), groups[1].Pending)
			require.Equal(e, "1-0", groups[1].LastDeliveredID)
			require.Equal(e, respire.Null[int64]{V: 2, Valid: true}, groups[1].Lag)

			cons, err := e.C.XInfoConsumers(e.Ctx, k, "g")
			require.NoError(e, err)
			require.Len(e, cons, 2)
			require.Equal(e, "alice", cons[0].Name)
			require.Equal(e, int64(0), cons[0].Pending)
			require.Equal(e, "bob", cons[1].Name)
			require.Equal(e, int64(2), cons[1].Pending)
			require.GreaterOrEqual(e, cons[1].Idle, int64(0))

			full, err := e.C.XInfoStreamFull(e.Ctx, k, nil)
			require.NoError(e, err)
			require.Equal(e, all, full.Entries)
			require.Len(e, full.Groups, 2)
			require.Equal(e, "g", full.Groups[0].Name)
			require.Equal(e, int64(2), full.Groups[0].PelCount)
			require.Len(e, full.Groups[0].Pending, 2)
			require.Equal(e, "2-0", full.Groups[0].Pending[0].ID)
			require.Equal(e, "bob", full.Groups[0].Pending[0].Consumer)
			require.Len(e, full.Groups[0].Consumers, 2)
			require.Equal(e, "bob", full.Groups[0].Consumers[1].Name)
			require.Equal(e, int64(2), full.Groups[0].Consumers[1].PelCount)
			require.Len(e, full.Groups[0].Consumers[1].Pending, 2)
			require.Equal(e, "3-0", full.Groups[0].Consumers[1].Pending[1].ID)

			// A group made at an arbitrary id after a deletion: entries-read
			// and lag are null.
			k4 := e.Key("s4")
			e.Do("XADD", k4, "1-0", "a", "1")
			e.Do("XADD", k4, "2-0", "a", "2")
			e.Do("XADD", k4, "3-0", "a", "3")
			e.Do("XDEL", k4, "2-0")
			require.NoError(e, e.C.XGroupCreate(e.Ctx, k4, "g", "1-0", nil))
			groups4, err := e.C.XInfoGroups(e.Ctx, k4)
			require.NoError(e, err)
			require.Equal(e, []respire.XInfoGroup{{Name: "g", LastDeliveredID: "1-0"}}, groups4)
			// A pending entry deleted from the stream: XAUTOCLAIM reports it.
			rd, err = e.C.XReadGroup(e.Ctx, "g", "dave", []string{k4}, []string{">"}, nil)
			require.NoError(e, err)
			require.Equal(e, []respire.StreamEntries{{Stream: k4, Entries: []respire.StreamEntry{{ID: "3-0", Fields: fv("a", "3")}}}}, rd)
			e.Do("XDEL", k4, "3-0")
			// Reading the history shows the deleted entry with null fields.
			rd, err = e.C.XReadGroup(e.Ctx, "g", "dave", []string{k4}, []string{"0"}, nil)
			require.NoError(e, err)
			require.Len(e, rd, 1)
			require.Len(e, rd[0].Entries, 1)
			require.Equal(e, "3-0", rd[0].Entries[0].ID)
			require.Empty(e, rd[0].Entries[0].Fields)
			ac, err = e.C.XAutoClaim(e.Ctx, k4, "g", "erin", 0, "0", nil)
			require.NoError(e, err)
			require.Equal(e, respire.XAutoClaim{Next: "0-0", Entries: []respire.StreamEntry{}, Deleted: []string{"3-0"}}, normAutoClaim(ac))

			require.NoError(e, e.C.XGroupSetID(e.Ctx, k, "g2", "0", &respire.XGroupSetIDOptions{EntriesRead: i64(0)}))
			require.NoError(e, e.C.XGroupSetID(e.Ctx, k, "g2", "", nil))
			groups, err = e.C.XInfoGroups(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, "3-0", groups[1].LastDeliveredID)

			n, err = e.C.XGroupDelConsumer(e.Ctx, k, "g", "bob")
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			n, err = e.C.XGroupDelConsumer(e.Ctx, k, "g", "nobody")
			require.NoError(e, err)
			require.Equal(e, int64(0), n)

			ok, err = e.C.XGroupDestroy(e.Ctx, k, "g2")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.XGroupDestroy(e.Ctx, k, "g2")
			require.NoError(e, err)
			require.False(e, ok)

			help, err := e.C.XGroupHelp(e.Ctx)
			require.NoError(e, err)
			require.NotEmpty(e, help)
			require.Contains(e, help[0], "XGROUP")
		},
	})
}

// normAutoClaim makes a nil Entries empty, so both compare equal.
func normAutoClaim(a respire.XAutoClaim) respire.XAutoClaim {
	if a.Entries == nil {
		a.Entries = []respire.StreamEntry{}
	}
	return a
}
