package clients

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/respire-go/respire/respire"
)

// respireClient is Respire with its defaults (one multiplexed connection,
// RESP3), with the default read mode or another one.
type respireClient struct {
	c *respire.Client
}

func newRespire(ctx context.Context, addr string, mode respire.ReadMode) (*respireClient, error) {
	c, err := respire.Connect(ctx, respire.Options{Addr: addr, ReadMode: mode})
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

// GetPipe sends the GETs as one Batch: one write, one wait, typed
// deferred results.
func (r *respireClient) GetPipe(ctx context.Context, keys, vals []string) error {
	b := r.c.NewBatch()
	futs := make([]*respire.Future[string], len(keys))
	for i, k := range keys {
		futs[i] = b.Get(k)
	}
	if err := b.Exec(ctx); err != nil {
		return err
	}
	var errs []error
	for i, f := range futs {
		v, err := f.Result()
		vals[i] = v
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r *respireClient) MGet(ctx context.Context, keys, vals []string) error {
	vs, err := r.c.MGet(ctx, keys...)
	if err != nil {
		return err
	}
	for i, v := range vs {
		if !v.Valid {
			return fmt.Errorf("MGET %s: %w", keys[i], ErrMissing)
		}
		vals[i] = v.V
	}
	return nil
}

func (r *respireClient) Close() error { return r.c.Close() }

func (r *respireClient) IOStats() IO {
	st := r.c.Stats()
	return IO{
		ParseReads: st.Reads, ParseBytes: st.Bytes,
		SocketReads: st.SocketReads, SocketBytes: st.SocketBytes,
		Commands: int64(st.Replies), Writes: int64(st.Writes),
	}
}

// respireLease is Respire without the filler, reading GET values into
// pooled Leases (GetLease, Batch.GetLease) that are checked in place and
// released: no allocation per value.
type respireLease struct {
	*respireClient
}

func (r *respireLease) GetCheck(ctx context.Context, key, want string) error {
	l, err := r.c.GetLease(ctx, key)
	if err != nil {
		return err
	}
	defer l.Release()
	return checkValue(key, l.Bytes(), want)
}

func (r *respireLease) GetPipeCheck(ctx context.Context, keys []string, ok func(int, []byte) bool) error {
	futs := r.takeFuts()
	defer r.putFuts(futs)
	b := r.c.NewBatch()
	for _, k := range keys {
		*futs = append(*futs, b.GetLease(k))
	}
	if err := b.Exec(ctx); err != nil {
		return err
	}
	var errs []error
	for i, f := range *futs {
		l, err := f.Result()
		if err == nil {
			if !ok(i, l.Bytes()) {
				err = fmt.Errorf("GET %s: %d bytes differ from the value written", keys[i], l.Len())
			}
			l.Release()
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// leaseFuts holds the future slices of GetPipeCheck, which several
// goroutines may call at once.
var leaseFuts = sync.Pool{New: func() any { return new([]*respire.Future[*respire.Lease]) }}

func (r *respireLease) takeFuts() *[]*respire.Future[*respire.Lease] {
	return leaseFuts.Get().(*[]*respire.Future[*respire.Lease])
}

func (r *respireLease) putFuts(f *[]*respire.Future[*respire.Lease]) {
	clear(*f)
	*f = (*f)[:0]
	leaseFuts.Put(f)
}

// checkValue compares without converting v to a string on the heap.
func checkValue(key string, v []byte, want string) error {
	if string(v) != want {
		return fmt.Errorf("GET %s: %d bytes differ from the %d written", key, len(v), len(want))
	}
	return nil
}
