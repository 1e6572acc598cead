package respire

import (
	"context"
	"errors"
	"log/slog"
)

// Logging of connection events (Options.Logger). Records carry the address
// and the error, never the configuration: no password, user name or
// command argument reaches a log. Levels:
//   - Warn: a dial or handshake that failed, an established connection
//     that broke, pub/sub messages lost;
//   - Info: a connection back after an outage, the first connection to an
//     address (a cluster node or a new primary the client had not used);
//   - Debug: any other new connection, an outage ended by Close.

func (c *Client) logConnect(d TraceConnectEndData) {
	l := c.trace.log
	if d.Err != nil {
		msg := "respire: dial failed"
		if d.Handshake {
			msg = "respire: handshake failed"
		}
		l.LogAttrs(context.Background(), slog.LevelWarn, msg,
			slog.String("addr", d.Addr), slog.String("error", d.Err.Error()))
		return
	}
	level, msg := slog.LevelDebug, "respire: connected"
	if _, seen := c.trace.seen.LoadOrStore(d.Addr, struct{}{}); !seen {
		level, msg = slog.LevelInfo, "respire: connected to a new node"
	}
	l.LogAttrs(context.Background(), level, msg, slog.String("addr", d.Addr),
		slog.String("server", d.Server), slog.String("version", d.Version), slog.Int("protocol", d.Protocol))
}

func (c *Client) logLost(addr string, cause error) {
	c.trace.log.LogAttrs(context.Background(), slog.LevelWarn, "respire: connection lost",
		slog.String("addr", addr), slog.String("error", errText(cause)))
}

func (c *Client) logRestored(addr string, attempts int, err error) {
	if errors.Is(err, ErrClosed) {
		c.trace.log.LogAttrs(context.Background(), slog.LevelDebug, "respire: closed while reconnecting",
			slog.String("addr", addr), slog.Int("attempts", attempts))
		return
	}
	c.trace.log.LogAttrs(context.Background(), slog.LevelInfo, "respire: reconnected",
		slog.String("addr", addr), slog.Int("attempts", attempts))
}

func (c *Client) logGap(d TracePubSubGapData) {
	attrs := []slog.Attr{slog.String("reason", d.Reason.String())}
	if d.Err != nil {
		attrs = append(attrs, slog.String("error", d.Err.Error()))
	}
	c.trace.log.LogAttrs(context.Background(), slog.LevelWarn, "respire: pub/sub messages lost", attrs...)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
