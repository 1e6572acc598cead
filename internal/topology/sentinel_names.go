package topology

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Sentinels name nodes by IP address, or by hostname when they run with
// announce-hostnames (and the data nodes announce names with
// replica-announce-ip). A deployment may mix the two (one sentinel
// reconfigured before the others, a client given IP addresses of
// sentinels that announce names), so the watcher compares addresses with
// sameNode rather than as strings: the same node under two names must not
// look like a switch, nor be followed twice.

// hostTTL is how long a hostname's addresses are remembered: names are
// used where addresses change (a pod rescheduled), so not for long.
const hostTTL = 5 * time.Second

// hostCache resolves hostnames for sameNode.
type hostCache struct {
	mu sync.Mutex
	m  map[string]hostEntry
	// lookup resolves a hostname; nil means net.DefaultResolver's.
	lookup func(ctx context.Context, host string) ([]string, error)
}

type hostEntry struct {
	ips []string
	at  time.Time
}

// ips returns the IP addresses of host, in their canonical form: host
// itself when it is one, nil when it does not resolve.
func (h *hostCache) ips(ctx context.Context, host string) []string {
	if ip := net.ParseIP(host); ip != nil {
		return []string{ip.String()}
	}
	host = strings.ToLower(host)
	h.mu.Lock()
	e, ok := h.m[host]
	lookup := h.lookup
	h.mu.Unlock()
	if ok && time.Since(e.at) < hostTTL {
		return e.ips
	}
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	found, err := lookup(ctx, host)
	var ips []string
	if err == nil {
		for _, a := range found {
			if ip := net.ParseIP(a); ip != nil {
				ips = append(ips, ip.String())
			}
		}
	}
	h.mu.Lock()
	if h.m == nil {
		h.m = make(map[string]hostEntry)
	}
	h.m[host] = hostEntry{ips: ips, at: time.Now()}
	h.mu.Unlock()
	return ips
}

// sameNode reports whether the "host:port" addresses a and b name the
// same node: equal, or the same port on hosts that are equal but for case,
// or on a hostname and an IP address it resolves to. Two hostnames are two
// nodes even on one IP address (a TLS proxy may route by server name);
// equal strings and two IP addresses never need a lookup.
func (s *Sentinel) sameNode(a, b string) bool {
	if a == b {
		return true
	}
	if a == "" || b == "" {
		return false
	}
	ha, pa, err := net.SplitHostPort(a)
	if err != nil {
		return false
	}
	hb, pb, err := net.SplitHostPort(b)
	if err != nil || pa != pb {
		return false
	}
	if strings.EqualFold(ha, hb) {
		return true
	}
	if (net.ParseIP(ha) == nil) == (net.ParseIP(hb) == nil) {
		return false
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.queryTimeout())
	defer cancel()
	ia := s.names.ips(ctx, ha)
	for _, ip := range s.names.ips(ctx, hb) {
		if slices.Contains(ia, ip) {
			return true
		}
	}
	return false
}

// spelled returns addr as one of known spells the same node, or addr.
func (s *Sentinel) spelled(addr string, known []string) string {
	if slices.Contains(known, addr) {
		return addr
	}
	for _, k := range known {
		if s.sameNode(addr, k) {
			return k
		}
	}
	return addr
}
