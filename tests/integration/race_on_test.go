//go:build race

package integration

// raceEnabled is set when the race detector is on: it allocates on its own
// and turns on the Lease checks, so allocation counts are not checked.
const raceEnabled = true
