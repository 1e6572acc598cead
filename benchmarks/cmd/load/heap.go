package main

// holdHeap returns mib MiB of memory for the caller to keep alive while it
// measures.
//
// A benchmark process holds little besides the client under test, so the
// garbage collector, which runs each time the heap has grown by as much as
// is live (GOGC=100, and 4 MiB at least), runs every few MiB allocated; a
// client that keeps larger buffers of its own runs it less often. An
// application's own data sets the pace instead, the same for every client:
// -heap gives the process such data, so that shapes that allocate per
// value (GET returning a string) can be compared at an application's pace
// too. The memory holds no pointers, so the collector need not scan it.
func holdHeap(mib int) [][]byte {
	if mib <= 0 {
		return nil
	}
	held := make([][]byte, mib)
	for i := range held {
		held[i] = make([]byte, 1<<20)
		for j := range held[i] {
			held[i][j] = byte(j)
		}
	}
	return held
}
