// Package resp reads and writes RESP, the Redis serialization protocol, in
// both its RESP2 and RESP3 forms. It is the bottom of the transport layer:
// it knows bytes and values, nothing about commands or connections.
//
// Where to start:
//
//   - types.go defines the vocabulary: Type, Node, Msg, Limits and the
//     protocol errors.
//   - Reader (reader.go, parse.go) turns a byte stream into replies. Next
//     returns one top-level value as a Msg: a flat, pre-order slice of Nodes
//     that aliases the reader's buffer, so reading small replies allocates
//     nothing. It parses incrementally without recursion and enforces
//     Limits, so a hostile or broken server cannot make it allocate by a
//     declared length, nest without bound, or panic.
//   - msg.go walks a Msg: Value skips attributes, Next skips an element,
//     Child indexes an aggregate.
//   - writer.go encodes commands (arrays of bulk strings) into a caller's
//     buffer: AppendCommand, AppendArrayLen, AppendBulk and friends.
//   - tree.go and encode.go convert between a Msg and a generic Value tree
//     (Msg.Tree, AppendValue), for generic replies, fixtures and tests.
//
// Visiting the children of the aggregate element at index i of a Msg m:
//
//	v := m.Value(i) // skip attributes in front of the element
//	j := v + 1
//	for k := 0; k < int(m[v].Int); k++ {
//		c := m.Value(j) // m[c] is the k-th child; map children alternate key, value
//		_ = c
//		j = m.Next(j)
//	}
//
// Streamed RESP3 values ("$?", "*?" and chunks) are not supported; a server
// only sends them when asked to, and the reader rejects them with a
// ProtocolError.
package resp
