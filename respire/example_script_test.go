package respire_test

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/respire"
)

// A Script is sent by its SHA1 (EVALSHA); the first Run on a server that
// lacks it loads it. Keep scripts in package variables.
var rateLimit = respire.NewScript(`
local n = redis.call("INCR", KEYS[1])
if n == 1 then redis.call("EXPIRE", KEYS[1], ARGV[1]) end
return n`)

func ExampleNewScript() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:script:calls")
	for range 3 {
		r, err := rateLimit.Run(ctx, c, []string{"ex:script:calls"}, "60")
		if err != nil {
			fmt.Println(err)
			return
		}
		n, _ := r.Int64()
		fmt.Print(n, " ")
	}
	fmt.Println()
	// Output: 1 2 3
}

// RunRO runs a script that declares it does not write (EVALSHA_RO), which
// a replica may serve.
func ExampleScript_RunRO() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	sumLen := respire.NewScript("#!lua flags=no-writes\n" +
		`return redis.call("STRLEN", KEYS[1]) + redis.call("STRLEN", KEYS[2])`)
	c.Set(ctx, "ex:scriptro:a", "abc", nil)
	c.Set(ctx, "ex:scriptro:b", "de", nil)
	if err := sumLen.Load(ctx, c); err != nil { // optional: Run loads it too
		fmt.Println(err)
		return
	}
	r, err := sumLen.RunRO(ctx, c, []string{"ex:scriptro:a", "ex:scriptro:b"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Int64())
	// Output: 5 <nil>
}
