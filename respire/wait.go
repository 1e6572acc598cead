package respire

import "strings"

// WAIT and WAITAOF on a Client.
//
// WAIT counts the replicas that acknowledged the writes made on the
// connection it runs on (the server remembers the replication offset of
// each connection's last write), and WAITAOF does the same for the AOF.
// A Client sends its writes on its multiplexed connections and its
// blocking commands on connections of the blocking pool, so a WAIT sent
// by itself runs on a connection that carries none of the caller's
// writes: it answers at once with every replica that acknowledged that
// connection's own last write, long ago or never, and says nothing about
// the caller's. Measured on Redis 7.0 with the only replica stopped
// (SIGSTOP): SET, then Client.Wait(ctx, 1, time.Second) answered 1 at
// once. Sending it on the multiplexed connection instead would hold up
// every other caller of the client until the replicas answer or the
// timeout ends, the shared fate the client is built to avoid.
//
// So a Client refuses WAIT and WAITAOF sent by themselves (the typed
// methods, Do and DoBlocking), with an *ArgError that names the ways that
// work: in the Batch that makes the writes (a batch holding a blocking
// command runs whole on one connection of the blocking pool, the writes
// first), or on a connection of the caller's own (Client.WithConn). On a
// cluster such a batch runs whole on one connection of the primary of its
// keys' slot, which they must share (cluster_batch.go).

const waitAlone = "refused on a Client: it counts the replicas (or AOFs) that acknowledged the writes made on its own " +
	"connection, and sent by itself it runs on a connection of the blocking pool that carries none of your writes, " +
	"so its count would say nothing about them; queue it in the Batch that makes the writes (Batch.Wait, " +
	"Batch.WaitAOF), or make the writes and WAIT on a connection of your own (Client.WithConn)"

// waitClusterSlot and waitClusterFanOut are why a cluster's batch that
// holds WAIT is refused: it runs whole on one node (cluster_batch.go).
const (
	waitClusterSlot   = "a batch with WAIT or WAITAOF on a cluster runs on one connection of its keys' primary, so that WAIT counts its writes"
	waitClusterFanOut = "it runs on every node, and a batch with WAIT or WAITAOF on a cluster runs on one connection of its keys' primary, so that WAIT counts its writes"
)

// ownWritesName returns the name of x when it is WAIT or WAITAOF (a typed
// method's, or Do's and DoBlocking's first word in any case), else "". It
// runs for every command a Client sends by itself: two pointer compares,
// and for Do's commands a length check before any compare of the word.
func ownWritesName(x *cmd) string {
	switch x.info {
	case &cmdWAIT, &cmdWAITAOF:
		return x.info.name
	}
	switch n := x.rawName; {
	case len(n) == len("WAIT") && strings.EqualFold(n, "WAIT"):
		return "WAIT"
	case len(n) == len("WAITAOF") && strings.EqualFold(n, "WAITAOF"):
		return "WAITAOF"
	}
	return ""
}

// refuseAlone is the *ArgError for WAIT or WAITAOF sent by itself on a
// Client, or nil for any other command.
func refuseAlone(x *cmd) error {
	if name := ownWritesName(x); name != "" {
		return &ArgError{Command: name, Argument: "command", Reason: waitAlone}
	}
	return nil
}
