package cancelstorm

import (
	"context"
	"errors"
	"time"

	"github.com/respire-go/respire/respire"
)

// Respire puts c behind Client: its generated methods, Batch and Tx.
func Respire(c *respire.Client) Client { return respireClient{c} }

type respireClient struct{ c *respire.Client }

func (r respireClient) Get(ctx context.Context, key string) (string, error) { return r.c.Get(ctx, key) }

func (r respireClient) Set(ctx context.Context, key, value string) error {
	return r.c.Set(ctx, key, value, nil)
}

func (r respireClient) Incr(ctx context.Context, key string) (int64, error) {
	return r.c.Incr(ctx, key)
}

func (r respireClient) MGet(ctx context.Context, keys []string) ([]string, error) {
	vs, err := r.c.MGet(ctx, keys...)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.V
	}
	return out, nil
}

// queuer is what a Batch and a Tx offer that queue uses.
type queuer interface {
	Set(key, value string, opts *respire.SetOptions) *respire.Future[struct{}]
	Incr(key string) *respire.Future[int64]
	Get(key string) *respire.Future[string]
}

// queue adds cmds to b; settle copies the results back.
func queue(b queuer, cmds []Cmd) (settle func()) {
	strs := make([]*respire.Future[string], len(cmds))
	ints := make([]*respire.Future[int64], len(cmds))
	sets := make([]*respire.Future[struct{}], len(cmds))
	for i, x := range cmds {
		switch x.Kind {
		case CmdSet:
			sets[i] = b.Set(x.Key, x.Value, nil)
		case CmdIncr:
			ints[i] = b.Incr(x.Key)
		case CmdGet:
			strs[i] = b.Get(x.Key)
		}
	}
	return func() {
		for i := range cmds {
			x := &cmds[i]
			switch x.Kind {
			case CmdSet:
				x.Err = sets[i].Err()
			case CmdIncr:
				x.Int, x.Err = ints[i].Result()
			case CmdGet:
				x.Str, x.Err = strs[i].Result()
			}
		}
	}
}

func (r respireClient) Batch(ctx context.Context, cmds []Cmd) error {
	b := r.c.NewBatch()
	settle := queue(b, cmds)
	err := b.Exec(ctx)
	settle()
	return err
}

func (r respireClient) Tx(ctx context.Context, cmds []Cmd) error {
	tx := r.c.NewTx()
	settle := queue(tx, cmds)
	err := tx.Exec(ctx)
	settle()
	return err
}

func (r respireClient) RPush(ctx context.Context, list, value string) error {
	_, err := r.c.RPush(ctx, list, value)
	return err
}

func (r respireClient) BLPop(ctx context.Context, list string, timeout time.Duration) (string, string, error) {
	ke, err := r.c.BLPop(ctx, timeout, list)
	if errors.Is(err, respire.Nil) {
		return "", "", nil
	}
	return ke.Key, ke.Element, err
}

func (respireClient) NotSent(err error) bool { return errors.Is(err, respire.ErrNotSent) }

func (respireClient) IsNil(err error) bool { return errors.Is(err, respire.Nil) }
