package transport

import (
	"errors"
	"fmt"
)

// ErrWrongRole is wrapped by the handshake error of a connection whose
// server does not report the replication role that Config.Role asks for:
// a demoted master, a promoted replica, a replica still syncing. Unlike
// ErrWrongNode it is not permanent.
var ErrWrongRole = errors.New("respire: wrong replication role")

// ErrNoAddress is the dial error while Config.Resolve knows no address
// (a Sentinel-watched master not discovered yet).
var ErrNoAddress = errors.New("respire: no address known yet")

// checkRole checks a ROLE reply against cfg.Role: "master", or "replica"
// (reported as "slave") whose link to its master is up.
func checkRole(r treeReply, cfg *Config) error {
	if len(r.Elems) == 0 {
		return fmt.Errorf("%w: %s answered ROLE with %s", ErrWrongRole, cfg.Addr, r.Type)
	}
	got := r.Elems[0].Str
	switch cfg.Role {
	case "master":
		if got == "master" {
			return nil
		}
	case "replica", "slave":
		if got != "slave" {
			break
		}
		// slave, master host, master port, state, offset.
		if len(r.Elems) < 4 || r.Elems[3].Str != "connected" {
			state := "unknown"
			if len(r.Elems) >= 4 {
				state = r.Elems[3].Str
			}
			return fmt.Errorf("%w: replica %s is not in sync with its master (link %s)", ErrWrongRole, cfg.Addr, state)
		}
		return nil
	}
	return fmt.Errorf("%w: %s is a %s, not a %s", ErrWrongRole, cfg.Addr, got, cfg.Role)
}

// stale reports a connection of the pool to an address that Config.Resolve
// no longer gives (the master moved): it is closed instead of reused.
func (p *BlockingPool) stale(d *Dedicated) bool {
	return p.cfg.Resolve != nil && d.info.Addr != p.cfg.Resolve()
}

// BusyOn returns the client ids (ConnInfo.ID) of the pool's connections to
// addr that a call holds now, such as blocking commands waiting on a
// master that a failover replaced: a caller may unblock them there (CLIENT
// UNBLOCK ... ERROR), which fails them with an UNBLOCKED error reply that
// says they did not run.
func (p *BlockingPool) BusyOn(addr string) []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []int64
	for d := range p.busy {
		if d.info.Addr == addr && d.info.ID != 0 {
			ids = append(ids, d.info.ID)
		}
	}
	return ids
}
