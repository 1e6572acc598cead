package spec

import (
	"cmp"
	"strconv"
	"strings"
)

// CompareServers orders server ids ("redis-7.0.15", "valkey-8.1.1") by
// product name, then by version compared number by number, so that
// "redis-10.0.0" sorts after "redis-8.0.2". It is the order of the
// "servers" lists in the file; it says nothing about which server is newer
// when merging (see Merge).
func CompareServers(a, b string) int {
	pa, va := splitServerID(a)
	pb, vb := splitServerID(b)
	if c := strings.Compare(pa, pb); c != 0 {
		return c
	}
	if c := compareVersions(va, vb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// splitServerID splits "redis-7.0.15" into "redis" and "7.0.15".
func splitServerID(id string) (product, version string) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return id, ""
	}
	return id[:i], id[i+1:]
}

// compareVersions compares dotted versions number by number; a part that
// is not a number compares as text.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y string
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.Atoi(x)
		ny, ey := strconv.Atoi(y)
		var c int
		if ex == nil && ey == nil {
			c = cmp.Compare(nx, ny)
		} else {
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return 0
}
