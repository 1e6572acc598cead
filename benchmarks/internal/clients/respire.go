package clients

import (
	"context"
	"errors"
	"sync"

	"github.com/respire-go/respire/respire"
)

// respireClient is Respire with its defaults (one multiplexed connection,
// RESP3), in one filler mode.
type respireClient struct {
	c *respire.Client
}

func newRespire(ctx context.Context, addr string, filler bool) (*respireClient, error) {
	mode := respire.FillerOff
	if filler {
		mode = respire.FillerOn
	}
	c, err := respire.Connect(ctx, respire.Options{Addr: addr, Filler: mode})
	if err != nil {
		return nil, err
	}
	return &respireClient{c: c}, nil
}

func (r *respireClient) Get(ctx context.Context, key string) (string, error) {
	return r.c.Get(ctx, key)
}

func (r *respireClient) Set(ctx context.Context, key, value string) error {
	return r.c.Set(ctx, key, value, nil)
}

func (r *respireClient) Incr(ctx context.Context, key string) (int64, error) {
	return r.c.Incr(ctx, key)
}

// GetPipe has no explicit pipeline to use until Batch lands, so it issues
// the GETs from one goroutine each and waits for all of them: Respire's
// automatic pipelining puts concurrent commands into shared writes. This is
// what a Respire user does today; it pays a goroutine start per command.
func (r *respireClient) GetPipe(ctx context.Context, keys, vals []string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(keys))
	for i := 1; i < len(keys); i++ {
		wg.Go(func() { vals[i], errs[i] = r.c.Get(ctx, keys[i]) })
	}
	vals[0], errs[0] = r.c.Get(ctx, keys[0])
	wg.Wait()
	return errors.Join(errs...)
}

func (r *respireClient) Close() error { return r.c.Close() }

func (r *respireClient) ReadStats() (reads, bytes int64) {
	st := r.c.Stats()
	return st.Reads, st.Bytes
}
