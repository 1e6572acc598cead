package harness

// Atomic slot migration: the servers move slots with their keys themselves
// (Valkey 9.0+ CLUSTER MIGRATESLOTS, Redis 8.4+ CLUSTER MIGRATION IMPORT),
// instead of the harness's MIGRATE loop of MoveSlots.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/respire-go/respire/respiretest/testserver"
)

// ErrNoAtomicMigration is returned by MigrateSlotsAtomic on a flavor whose
// servers have no atomic slot migration.
var ErrNoAtomicMigration = errors.New("harness: atomic slot migration needs Valkey 9.0+ (CLUSTER MIGRATESLOTS) or Redis 8.4+ (CLUSTER MIGRATION IMPORT)")

// AtomicMigration reports whether the flavor's servers migrate slots
// atomically (Valkey 9.0+, Redis 8.4+).
func (f Flavor) AtomicMigration() bool {
	product, v, _ := strings.Cut(string(f), "-")
	maj, mnr, _ := strings.Cut(v, ".")
	major, _ := strconv.Atoi(maj)
	minor, _ := strconv.Atoi(mnr)
	switch product {
	case "valkey":
		return major >= 9
	case "redis":
		return major > 8 || major == 8 && minor >= 4
	}
	return false
}

// MigrateSlotsAtomic moves slots, with their keys, from one master to
// another with the servers' atomic slot migration, while the cluster
// serves: on Valkey it sends CLUSTER MIGRATESLOTS to from and follows the
// job in CLUSTER GETSLOTMIGRATIONS; on Redis it sends CLUSTER MIGRATION
// IMPORT to to and follows the task in CLUSTER MIGRATION STATUS. Clients
// see no ASK redirection: the source serves the slots until the handoff,
// which pauses their writes briefly, then answers MOVED. It returns once
// the job succeeded and every node that is up reports the slots on to; an
// error if the job failed for good (its message included), or
// ErrNoAtomicMigration on a flavor without atomic migration. Every slot
// must be from's.
func (c *Cluster) MigrateSlotsAtomic(ctx context.Context, from, to *ClusterNode, slots []int) error {
	c.mustNotBeShared("MigrateSlotsAtomic")
	if !c.Flavor.AtomicMigration() {
		return fmt.Errorf("%w, not %s", ErrNoAtomicMigration, c.Flavor)
	}
	if from == to {
		return fmt.Errorf("harness: MigrateSlotsAtomic from %s to itself", from.Addr)
	}
	ranges, err := slotRanges(slots)
	if err != nil {
		return err
	}
	if len(ranges) == 0 {
		return nil
	}
	if strings.HasPrefix(string(c.Flavor), "valkey-") {
		err = c.migrateSlotsValkey(ctx, from, to, ranges)
	} else {
		err = c.migrateSlotsRedis(ctx, to, ranges)
	}
	if err != nil {
		return err
	}
	return c.waitOwner(ctx, to, slots)
}

// slotRanges sorts slots and joins them into ranges "start", "end", ...,
// as both servers' commands take them.
func slotRanges(slots []int) ([]string, error) {
	s := slices.Clone(slots)
	slices.Sort(s)
	s = slices.Compact(s)
	var out []string
	for i := 0; i < len(s); {
		if s[i] < 0 || s[i] >= SlotCount {
			return nil, fmt.Errorf("harness: slot %d is out of range [0, %d)", s[i], SlotCount)
		}
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		out = append(out, strconv.Itoa(s[i]), strconv.Itoa(s[j]))
		i = j + 1
	}
	return out, nil
}

// migrateSlotsValkey runs CLUSTER MIGRATESLOTS on from and waits until the
// export job it started (the entry of CLUSTER GETSLOTMIGRATIONS that was
// not there before) reports success.
func (c *Cluster) migrateSlotsValkey(ctx context.Context, from, to *ClusterNode, ranges []string) error {
	before, err := slotMigrations(ctx, from)
	if err != nil {
		return err
	}
	args := append([]string{"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE"}, ranges...)
	args = append(args, "NODE", to.ID)
	if _, err := from.Do(ctx, args...); err != nil {
		return fmt.Errorf("harness: CLUSTER MIGRATESLOTS on %s: %w", from.Addr, err)
	}
	var failed error
	err = poll(ctx, "the slot migration from "+from.Addr+" to "+to.Addr, func(ctx context.Context) error {
		jobs, err := slotMigrations(ctx, from)
		if err != nil {
			return err
		}
		found := false
		for name, job := range jobs {
			if _, old := before[name]; old || job["operation"] != "EXPORT" || job["target_node"] != to.ID {
				continue
			}
			found = true
			switch job["state"] {
			case "success":
			case "failed", "cancelled", "canceled":
				failed = fmt.Errorf("harness: slot migration %s from %s to %s %s: %s", name, from.Addr, to.Addr, job["state"], job["message"])
				return nil
			default:
				return fmt.Errorf("job %s is %s", name, job["state"])
			}
		}
		if !found {
			return errors.New("no new export job in CLUSTER GETSLOTMIGRATIONS")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failed
}

// slotMigrations returns n's CLUSTER GETSLOTMIGRATIONS by job name.
func slotMigrations(ctx context.Context, n *ClusterNode) (map[string]map[string]string, error) {
	reply, err := n.Do(ctx, "CLUSTER", "GETSLOTMIGRATIONS")
	if err != nil {
		return nil, fmt.Errorf("harness: CLUSTER GETSLOTMIGRATIONS on %s: %w", n.Addr, err)
	}
	out := map[string]map[string]string{}
	entries, _ := reply.([]any)
	for _, e := range entries {
		job := testserver.Pairs(e)
		out[job["name"]] = job
	}
	return out, nil
}

// migrateSlotsRedis runs CLUSTER MIGRATION IMPORT on to and waits until
// its task completes. A task that failed is retried by the server, so
// only a cancelled one ends the wait early; a failure is in the error of
// a wait that timed out.
func (c *Cluster) migrateSlotsRedis(ctx context.Context, to *ClusterNode, ranges []string) error {
	reply, err := to.Do(ctx, append([]string{"CLUSTER", "MIGRATION", "IMPORT"}, ranges...)...)
	if err != nil {
		return fmt.Errorf("harness: CLUSTER MIGRATION IMPORT on %s: %w", to.Addr, err)
	}
	id, ok := reply.(string)
	if !ok || id == "" {
		return fmt.Errorf("harness: CLUSTER MIGRATION IMPORT on %s replied %v, not a task ID", to.Addr, reply)
	}
	var failed error
	err = poll(ctx, "slot migration task "+id+" on "+to.Addr, func(ctx context.Context) error {
		reply, err := to.Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ID", id)
		if err != nil {
			return fmt.Errorf("CLUSTER MIGRATION STATUS on %s: %w", to.Addr, err)
		}
		var task map[string]string
		if tasks, _ := reply.([]any); len(tasks) > 0 {
			task = testserver.Pairs(tasks[0])
		}
		switch task["state"] {
		case "completed":
			return nil
		case "canceled", "cancelled":
			failed = fmt.Errorf("harness: slot migration task %s on %s was cancelled: %s", id, to.Addr, task["last_error"])
			return nil
		case "":
			return fmt.Errorf("task %s is not in CLUSTER MIGRATION STATUS: %v", id, reply)
		default:
			return fmt.Errorf("task %s is %s (retries %s, last error %q)", id, task["state"], task["retries"], task["last_error"])
		}
	})
	if err != nil {
		return err
	}
	return failed
}

// waitOwner waits until every node that is up reports slots on to.
func (c *Cluster) waitOwner(ctx context.Context, to *ClusterNode, slots []int) error {
	return poll(ctx, fmt.Sprintf("every node to give %d slots to %s", len(slots), to.Addr), func(ctx context.Context) error {
		for _, n := range c.upNodes() {
			v, err := c.view(ctx, n, false)
			if err != nil {
				return err
			}
			e := v.Nodes[to.ID]
			for _, slot := range slots {
				if !e.Owns(slot) {
					return fmt.Errorf("%s does not report slot %d on %s", n.Addr, slot, to.Addr)
				}
			}
		}
		return nil
	})
}
