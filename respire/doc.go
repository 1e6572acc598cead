// Package respire is a Redis and Valkey client for Go: typed methods for
// every command, generated from the command spec, over a multiplexed
// transport that pipelines concurrent callers automatically.
//
// Start with Connect (or NewClient) and Options; ParseURL reads
// redis://, rediss:// and unix:// URLs:
//
//	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
//	if err != nil { ... }
//	defer c.Close()
//	if err := c.Set(ctx, "greeting", "hello", nil); err != nil { ... }
//	v, err := c.Get(ctx, "greeting") // errors.Is(err, respire.Nil) when missing
//
// Do sends any command and returns a generic Reply. Errors from the server
// are *Error values with the server's prefix; a missing value is Nil;
// transport failures wrap ErrClosed, ErrUnavailable, a *ConnError or the
// context's error.
package respire
