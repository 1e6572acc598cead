package respire_test

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/respire"
)

// HSetMap sets a hash's fields from a map; its values are converted as Do
// converts its arguments.
func ExampleClient_HSetMap() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:hsetmap:user")
	added, err := c.HSetMap(ctx, "ex:hsetmap:user", map[string]any{"name": "ada", "visits": 3, "admin": true})
	fmt.Println(added, err)
	user, _ := c.HGetAll(ctx, "ex:hsetmap:user")
	fmt.Println(user["name"], user["visits"], user["admin"])

	_, err = c.HSetMap(ctx, "ex:hsetmap:user", map[string]any{"tags": []string{"a"}})
	fmt.Println(err)
	// Output:
	// 3 <nil>
	// ada 3 1
	// respire: HSET: argument value of field "tags": unsupported type []string (strings, []byte, integers, floats, bool and time.Duration are)
}

// XAddMap appends a stream entry from a map, with its fields in the order
// of their names.
func ExampleClient_XAddMap() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:xaddmap:events")
	id, err := c.XAddMap(ctx, "ex:xaddmap:events", "1-1", map[string]any{"x": 12, "kind": "click"}, nil)
	fmt.Println(id, err)
	entries, _ := c.XRange(ctx, "ex:xaddmap:events", "-", "+", nil)
	fmt.Println(entries[0].Fields)
	// Output:
	// 1-1 <nil>
	// [{kind click} {x 12}]
}

// SetIfGet writes under a condition and tells the old value and whether
// the condition held, in one round trip.
func ExampleClient_SetIfGet() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:setifget:leader")
	r, err := c.SetIfGet(ctx, "ex:setifget:leader", "me", respire.SetIfCondition{NX: true}, nil)
	fmt.Println(r.Set, r.Old.Valid, err)
	r, err = c.SetIfGet(ctx, "ex:setifget:leader", "you", respire.SetIfCondition{NX: true}, nil)
	fmt.Println(r.Set, r.Old.V, err)
	// Output:
	// true false <nil>
	// false me <nil>
}
