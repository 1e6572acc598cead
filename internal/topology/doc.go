// Package topology decides which server node serves a command: the slot
// map of a Redis Cluster (or Valkey cluster), kept current from CLUSTER
// SHARDS, patched by MOVED redirects and refreshed when a node fails.
//
// It sits between the public respire package and transport: respire
// computes a command's slot (Slot) and knows from the spec whether it is
// read-only and how its tips fan it out; a Cluster maps the slot to a Node,
// whose transport.Mux and transport.BlockingPool carry the command. The
// package knows nothing of generated code or reply types.
//
// Start with Cluster: New, then Route for a slot. Refreshes are coalesced
// (one fetch at a time, whatever the number of callers asking) and
// rate-limited; a topology is adopted only from a node whose id the client
// already knows (verified by CLUSTER MYID on every connection), so a
// different cluster answering at a reused address is never routed to.
package topology
