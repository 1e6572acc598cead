package respire_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/respire-go/respire/respire"
)

func ExampleClient_NewTx() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()

	tx := c.NewTx()
	hits := tx.Incr("page:hits")
	tx.Expire("page:hits", time.Hour, nil)
	if err := tx.Exec(ctx); err != nil {
		fmt.Println("transaction:", err)
		return
	}
	n, err := hits.Result()
	fmt.Println(n, err)
}

// Move an amount between two balances, only if the source covers it.
func ExampleClient_WatchRetry() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()

	const amount = 30
	errInsufficient := errors.New("insufficient funds")
	err = c.WatchRetry(ctx, func(tx *respire.Tx) error {
		s, err := c.Get(ctx, "balance:alice")
		if err != nil {
			return err
		}
		from, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		if from < amount {
			return errInsufficient // nothing is executed
		}
		tx.Set("balance:alice", strconv.Itoa(from-amount), nil)
		tx.IncrBy("balance:bob", amount)
		return nil
	}, "balance:alice")
	fmt.Println(err)
}

var incrCapped = respire.NewScript(`
local n = redis.call("INCR", KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[1])
  return tonumber(ARGV[1])
end
return n`)

func ExampleScript_Run() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()

	r, err := incrCapped.Run(ctx, c, []string{"counter"}, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := r.Int64()
	fmt.Println(n, err)
}
