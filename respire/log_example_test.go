package respire_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/respire-go/respire/respire"
)

// Options.Logger receives the client's connection events: failed dials
// and handshakes, lost connections, reconnects and new nodes at Warn and
// Info, every new connection at Debug. Passwords never appear.
func ExampleOptions_logger() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, err := respire.Connect(context.Background(), respire.Options{
		Addr:     "localhost:6379",
		Password: "not in any log",
		Logger:   logger.With("component", "cache"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
}
