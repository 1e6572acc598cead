package integration

import "github.com/respire-go/respire/internal/transport/resp"

func respireLimits() resp.Limits {
	return resp.Limits{MaxBulk: 1 << 20}
}
