//go:build !race && !respire_leasecheck

package respire

// leaseChecksBuild turns on the misuse checks of Lease and LeaseList in
// race builds and in builds with the respire_leasecheck tag.
const leaseChecksBuild = false
