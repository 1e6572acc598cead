package respire

import "unsafe"

// UnsafeString returns a string that shares b's memory, without copying
// it, so that a caller holding a value as a []byte passes it to a method
// that takes a string (Set, HSet, XAdd, ...) without the allocation and
// copy of string(b):
//
//	err := c.Set(ctx, "k", respire.UnsafeString(payload), nil)
//
// The bytes must not change until the call that takes the string returns;
// for a command queued in a Batch or a Tx, until its Exec returns. The
// client copies what it sends before then (a large value is written from
// b's memory, and the call returns only once no write reads it any more,
// a cancelled call included), so b is the caller's to reuse or change
// afterwards.
//
// Use it for values that are sent and forgotten. A key, channel or pattern
// may be kept by the client after the call (a client-side cache entry, a
// subscription that is renewed after a reconnect): pass those as ordinary
// strings. An empty or nil b gives "".
func UnsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
