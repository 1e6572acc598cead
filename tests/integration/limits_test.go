package integration

import "github.com/respire-go/respire/respire"

func respireLimits() respire.Limits {
	return respire.Limits{MaxBulk: 1 << 20}
}
