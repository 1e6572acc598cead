package conformance

import (
	"errors"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// Commands of the newest servers (Redis 8.6, Valkey 9.1). Helpers and
// names of this file carry the "d" prefix.

// dValkey reports whether the case runs on Valkey (any version).
func dValkey(e *Env) bool { return strings.HasPrefix(string(e.Flavor), "valkey-") }

// dUnsupportedArg asserts err refuses argument arg of command, before
// anything was sent.
func dUnsupportedArg(e *Env, err error, command, arg string) {
	e.Helper()
	var ue *respire.UnsupportedError
	require.ErrorAs(e, err, &ue)
	require.Equal(e, command, ue.Command)
	require.Equal(e, arg, ue.Argument)
	require.ErrorIs(e, err, respire.ErrNotSent)
}

func dIsNil(e *Env, err error) {
	e.Helper()
	require.True(e, errors.Is(err, respire.Nil), "want respire.Nil, got %v", err)
}

func init() {
	register(
		Case{
			Name:     "d_delex_digest",
			Commands: []string{"DELEX", "DIGEST"},
			Probe: func(e *Env) error {
				_, err := e.C.DelEx(e.Ctx, e.Key("k"), nil)
				return err
			},
			Run: func(e *Env) {
				k := e.Key("k")
				_, err := e.C.Digest(e.Ctx, k)
				dIsNil(e, err)
				e.Do("SET", k, "v")
				d, err := e.C.Digest(e.Ctx, k)
				require.NoError(e, err)
				require.Regexp(e, "^[0-9a-f]{16}$", d)
				n, err := e.C.DelEx(e.Ctx, k, &respire.DelExOptions{IfEq: "other"})
				require.NoError(e, err)
				require.Equal(e, int64(0), n, "IFEQ with another value keeps the key")
				n, err = e.C.DelEx(e.Ctx, k, &respire.DelExOptions{IfNe: "other"})
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.DelEx(e.Ctx, k, nil)
				require.NoError(e, err)
				require.Equal(e, int64(0), n, "no key")
				// A digest is hex text (spec/supplement.json types it so).
				e.Do("SET", k, "v")
				n, err = e.C.DelEx(e.Ctx, k, &respire.DelExOptions{IfDNe: d})
				require.NoError(e, err)
				require.Equal(e, int64(0), n, "IFDNE with the value's own digest keeps the key")
				n, err = e.C.DelEx(e.Ctx, k, &respire.DelExOptions{IfDEq: d})
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
			},
		},
		Case{
			Name:     "d_delifeq",
			Commands: []string{"DELIFEQ"},
			Probe: func(e *Env) error {
				_, err := e.C.DelIfEq(e.Ctx, e.Key("k"), "v")
				return err
			},
			Run: func(e *Env) {
				k := e.Key("k")
				e.Do("SET", k, "v")
				n, err := e.C.DelIfEq(e.Ctx, k, "w")
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.DelIfEq(e.Ctx, k, "v")
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
			},
		},
		Case{
			Name:     "d_msetex",
			Commands: []string{"MSETEX"},
			Probe: func(e *Env) error {
				_, err := e.C.MSetEx(e.Ctx, []respire.KeyValue{{Key: e.Key("a"), Value: "1"}}, nil)
				return err
			},
			Run: func(e *Env) {
				a, b := e.Key("a"), e.Key("b")
				ex := 100 * time.Second
				ok, err := e.C.MSetEx(e.Ctx, []respire.KeyValue{{Key: a, Value: "1"}, {Key: b, Value: "2"}}, &respire.MSetExOptions{EX: ex})
				require.NoError(e, err)
				require.True(e, ok)
				n, err := e.Do("TTL", b).Int64()
				require.NoError(e, err)
				require.InDelta(e, 100, n, 5)
				ok, err = e.C.MSetEx(e.Ctx, []respire.KeyValue{{Key: a, Value: "3"}}, &respire.MSetExOptions{Condition: respire.ExistenceNX})
				require.NoError(e, err)
				require.False(e, ok, "NX with an existing key sets nothing")
			},
		},
		Case{
			Name:     "d_hotkeys",
			Commands: []string{"HOTKEYS START", "HOTKEYS GET", "HOTKEYS STOP", "HOTKEYS RESET", "HOTKEYS HELP"},
			Server:   "own",
			Probe: func(e *Env) error {
				return e.C.HotkeysStart(e.Ctx, 1, nil)
			},
			Run: func(e *Env) {
				_, err := e.C.HotkeysGet(e.Ctx)
				dIsNil(e, err)
				require.NoError(e, e.C.HotkeysStart(e.Ctx, 2, &respire.HotkeysStartOptions{CPU: true, Net: true}))
				e.Do("SET", e.Key("hot"), "v")
				e.Do("GET", e.Key("hot"))
				reps, err := e.C.HotkeysGet(e.Ctx)
				require.NoError(e, err)
				require.Len(e, reps, 1)
				r := reps[0]
				require.True(e, r.TrackingActive)
				require.Equal(e, []respire.SlotRange{{Start: 0, End: 16383}}, r.SelectedSlots)
				require.Positive(e, r.CollectionStartTimeUnixMs)
				require.NotEmpty(e, r.ByNetBytes)
				require.Equal(e, e.Key("hot"), r.ByNetBytes[0].Key)
				require.Positive(e, r.ByNetBytes[0].Value)
				require.NoError(e, e.C.HotkeysStop(e.Ctx))
				require.NoError(e, e.C.HotkeysReset(e.Ctx))
				_, err = e.C.HotkeysGet(e.Ctx)
				dIsNil(e, err)
				help, err := e.C.HotkeysHelp(e.Ctx)
				require.NoError(e, err)
				require.NotEmpty(e, help)
			},
		},
		Case{
			Name:     "d_trimslots",
			Commands: []string{"TRIMSLOTS"},
			Probe: func(e *Env) error {
				return e.C.TrimSlots(e.Ctx, respire.TrimSlotsSlots{StartSlot: 0, EndSlot: 0})
			},
			Run: func(e *Env) {
				// Standalone: refused; the cluster case below trims a slot.
				err := e.C.TrimSlots(e.Ctx, respire.TrimSlotsSlots{StartSlot: 0, EndSlot: 0})
				e.ServerError(err, "ERR")
			},
		},
		Case{
			Name:     "d_vrange",
			Commands: []string{"VRANGE"},
			Probe: func(e *Env) error {
				_, err := e.C.VRange(e.Ctx, e.Key("v"), "-", "+", nil)
				return err
			},
			Run: func(e *Env) {
				k := e.Key("v")
				for _, m := range []string{"c", "a", "b"} {
					e.Do("VADD", k, "VALUES", "2", "1", "0", m)
				}
				all, err := e.C.VRange(e.Ctx, k, "-", "+", nil)
				require.NoError(e, err)
				require.Equal(e, []string{"a", "b", "c"}, all)
				n := int64(2)
				some, err := e.C.VRange(e.Ctx, k, "(a", "+", &respire.VRangeOptions{Count: n})
				require.NoError(e, err)
				require.Equal(e, []string{"b", "c"}, some)
			},
		},
		Case{
			Name:     "d_stream_refs",
			Commands: []string{"XACKDEL", "XDELEX", "XCFGSET", "XIDMPRECORD"},
			Probe: func(e *Env) error {
				_, err := e.C.XAckDel(e.Ctx, e.Key("s"), "g", []string{"1-1"}, nil)
				return err
			},
			Run: func(e *Env) {
				s := e.Key("s")
				e.Do("XADD", s, "1-1", "f", "v")
				e.Do("XADD", s, "2-1", "f", "v")
				e.Do("XADD", s, "3-1", "f", "v")
				e.Do("XGROUP", "CREATE", s, "g", "0")
				e.Do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", s, ">")
				codes, err := e.C.XAckDel(e.Ctx, s, "g", []string{"1-1", "9-9"}, nil)
				require.NoError(e, err)
				require.Equal(e, []int64{1, -1}, codes)
				codes, err = e.C.XDelEx(e.Ctx, s, []string{"2-1", "9-9"}, &respire.XDelExOptions{Condition: respire.RefPolicyKeepRef})
				require.NoError(e, err)
				require.Equal(e, []int64{1, -1}, codes)
				require.NoError(e, e.C.XCfgSet(e.Ctx, s, &respire.XCfgSetOptions{
					IDMPDuration: 100,
					IDMPMaxSize:  10,
				}))
				require.NoError(e, e.C.XIDMPRecord(e.Ctx, s, "p", "i", "3-1"))
				err = e.C.XIDMPRecord(e.Ctx, s, "p", "j", "9-9")
				e.ServerError(err, "ERR")

				// XREADGROUP CLAIM 0 (a pointer: 0 is a value) claims a pending
				// entry however briefly idle; the streams come as a list.
				e.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", s, ">")
				var anyIdle time.Duration
				rd, err := e.C.XReadGroup(e.Ctx, "g", "d", []string{s}, []string{">"}, &respire.XReadGroupOptions{Claim: &anyIdle})
				require.NoError(e, err)
				require.Len(e, rd, 1)
				require.Equal(e, s, rd[0].Stream)
				require.NotEmpty(e, rd[0].Entries)
				require.Equal(e, "3-1", rd[0].Entries[0].ID)
				require.Equal(e, fv("f", "v"), rd[0].Entries[0].Fields)
			},
		},
		Case{
			Name:     "d_cluster_migration",
			Commands: []string{"CLUSTER MIGRATION", "TRIMSLOTS"},
			Server:   "cluster",
			Probe: func(e *Env) error {
				_, err := e.C.ClusterMigration(e.Ctx, respire.ClusterMigrationSubCommand{Status: respire.ClusterMigrationStatus{All: true}})
				return err
			},
			Run: func(e *Env) {
				st, err := e.C.ClusterMigration(e.Ctx, respire.ClusterMigrationSubCommand{Status: respire.ClusterMigrationStatus{All: true}})
				require.NoError(e, err)
				tasks, err := st.Slice()
				require.NoError(e, err)
				require.Empty(e, tasks)
				n, err := e.C.ClusterMigration(e.Ctx, respire.ClusterMigrationSubCommand{Cancel: respire.Cancel{All: true}})
				require.NoError(e, err)
				cancelled, err := n.Int64()
				require.NoError(e, err)
				require.Equal(e, int64(0), cancelled)
				_, err = e.C.ClusterMigration(e.Ctx, respire.ClusterMigrationSubCommand{Import: []respire.SlotsRange{{StartSlot: 0, EndSlot: 10}}})
				e.ServerError(err, "ERR")
				// A node may not trim the slots it serves.
				err = e.C.TrimSlots(e.Ctx, respire.TrimSlotsSlots{StartSlot: 0, EndSlot: 0})
				e.ServerError(err, "ERR")
			},
		},
		Case{
			Name:     "d_cluster_syncslots",
			Commands: []string{"CLUSTER SYNCSLOTS"},
			Server:   "cluster",
			Probe: func(e *Env) error {
				_, err := e.C.ClusterSyncSlots(e.Ctx, respire.ClusterSyncSlotsSubCommand{SnapshotEof: true})
				return err
			},
			Run: func(e *Env) {
				// Only for the nodes' own migration links: refused here.
				_, err := e.C.ClusterSyncSlots(e.Ctx, respire.ClusterSyncSlotsSubCommand{SnapshotEof: true})
				e.ServerError(err, "ERR")
			},
		},
		Case{
			Name: "d_cluster_slot_migrations",
			Commands: []string{"CLUSTER GETSLOTMIGRATIONS", "CLUSTER CANCELSLOTMIGRATIONS", "CLUSTER MIGRATESLOTS",
				"CLUSTER FLUSHSLOT", "CLUSTERSCAN"},
			Server: "cluster",
			Probe: func(e *Env) error {
				_, err := e.C.ClusterGetSlotMigrations(e.Ctx)
				return err
			},
			Run: func(e *Env) {
				migs, err := e.C.ClusterGetSlotMigrations(e.Ctx)
				require.NoError(e, err)
				require.Empty(e, migs)
				err = e.C.ClusterCancelSlotMigrations(e.Ctx)
				e.ServerError(err, "ERR")
				err = e.C.ClusterMigrateSlots(e.Ctx, respire.MigrationGroup{
					Range: []respire.SlotsRange{{StartSlot: 0, EndSlot: 10}}, NodeID: "nosuchnode"})
				e.ServerError(err, "ERR")

				k := e.Key("x")
				e.Do("SET", k, "v")
				slot, err := e.C.ClusterKeySlot(e.Ctx, k)
				require.NoError(e, err)
				found := false
				cursor := "0"
				for i := 0; i < 20000 && !found; i++ {
					page, err := e.C.ClusterScan(e.Ctx, cursor, &respire.ClusterScanOptions{Match: k, Slot: &slot})
					require.NoError(e, err)
					for _, key := range page.Keys {
						found = found || key == k
					}
					cursor = page.Cursor
					if cursor == "0" {
						break
					}
				}
				require.True(e, found, "CLUSTERSCAN of the key's slot finds it")
				require.NoError(e, e.C.ClusterFlushSlot(e.Ctx, slot, nil))
				n, err := e.Do("EXISTS", k).Int64()
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
			},
		},
	)
}

// Per-argument availability: SET IFEQ came with Valkey 8.1 and Redis 8.4;
// on the servers without it the client refuses it before anything is sent,
// alone and in a Batch (where the server's bare syntax error would
// otherwise fail the whole pipeline).
func init() {
	register(Case{
		Name:     "d_set_ifeq_availability",
		Commands: []string{"SET"},
		Run: func(e *Env) {
			k := e.Key("k")
			require.NoError(e, e.C.Set(e.Ctx, k, "v", nil))
			_, err := e.C.SetIf(e.Ctx, k, "w", respire.SetIfCondition{IfEq: "v"}, nil)
			if e.Flavor == "redis-7.0" || e.Flavor == "redis-8.0" {
				dUnsupportedArg(e, err, "SET", "IFEQ")
				require.Contains(e, err.Error(), "SET argument IFEQ is not available on redis "+string(e.Flavor[len("redis-"):]))
				require.ErrorIs(e, err, respire.ErrUnsupported)

				var ue *respire.UnsupportedError
				b := e.C.NewBatch()
				b.Set(e.Key("other"), "x", nil)
				f := b.SetIf(k, "w", respire.SetIfCondition{IfEq: "v"}, nil)
				err = b.Exec(e.Ctx)
				require.ErrorAs(e, err, &ue)
				_, ferr := f.Result()
				require.ErrorAs(e, ferr, &ue)
				n, err := e.Do("EXISTS", e.Key("other")).Int64()
				require.NoError(e, err)
				require.Zero(e, n, "nothing of the batch was sent")
			} else {
				require.NoError(e, err)
				got, err := e.C.Get(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, "w", got)
			}
			// OK or null: whether the condition held, never Nil as an error.
			ok, err := e.C.SetIf(e.Ctx, k, "x", respire.SetIfCondition{NX: true}, nil)
			require.NoError(e, err)
			require.False(e, ok, "NX on an existing key")
			ok, err = e.C.SetIf(e.Ctx, k, "x", respire.SetIfCondition{XX: true}, nil)
			require.NoError(e, err)
			require.True(e, ok)
			b := e.C.NewBatch()
			f := b.SetIf(e.Key("fresh"), "1", respire.SetIfCondition{XX: true}, nil)
			require.NoError(e, b.Exec(e.Ctx))
			ok, err = f.Result()
			require.NoError(e, err)
			require.False(e, ok, "XX on a missing key, in a Batch")
		},
	})
}
