package aside_test

import (
	"context"
	"fmt"
	"time"

	"github.com/respire-go/respire/aside"
	"github.com/respire-go/respire/respire"
)

// A cache-aside read: the loader runs only when the key is in neither the
// process's memory nor Redis, once for all the goroutines that miss it.
func Example() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379", ClientCache: &respire.CacheOptions{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	profiles, err := aside.New(c, aside.Options{TTL: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := profiles.Get(ctx, "profile:42", func(ctx context.Context, key string) (string, error) {
		return `{"name":"Ada"}`, nil // a database query, in real life
	})
	fmt.Println(v, err)
}

// After writing the source of truth, delete the key: every process that
// cached it drops its copy.
func ExampleCache_Delete() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379", ClientCache: &respire.CacheOptions{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	profiles, err := aside.New(c, aside.Options{TTL: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	// db.UpdateProfile(ctx, 42, ...)
	if err := profiles.Delete(ctx, "profile:42"); err != nil {
		fmt.Println(err)
	}
}
