//go:build !race

package respire

// leaseRaceBuild turns on the misuse checks of Lease in race builds.
const leaseRaceBuild = false
