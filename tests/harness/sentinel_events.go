package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// SentinelEvent is one event a sentinel published.
type SentinelEvent struct {
	At       time.Time
	Sentinel string // address of the sentinel that published it
	Channel  string // "+switch-master", "+odown", ...
	Payload  string
}

func (e SentinelEvent) String() string {
	return fmt.Sprintf("%s %s %s %s", e.At.Format("15:04:05.000"), e.Sentinel, e.Channel, e.Payload)
}

// EventLog records the events of every sentinel of a deployment (PSUBSCRIBE
// *), reconnecting to a sentinel that was killed or restarted.
type EventLog struct {
	mu     sync.Mutex
	events []SentinelEvent
	added  chan struct{} // closed and replaced at every event
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	conns  map[*testserver.Conn]struct{}
}

func newEventLog(sps []*SentinelProc) *EventLog {
	l := &EventLog{added: make(chan struct{}), conns: make(map[*testserver.Conn]struct{})}
	l.ctx, l.stop = context.WithCancel(context.Background())
	ready := make(chan struct{}, len(sps))
	for _, sp := range sps {
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.follow(sp, ready) }()
	}
	for range sps {
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
		}
	}
	return l
}

func (l *EventLog) follow(sp *SentinelProc, ready chan<- struct{}) {
	addr := sp.Addr
	first := true
	for l.ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(l.ctx, time.Second)
		c, err := sp.dial(dctx)
		cancel()
		if err == nil {
			_ = c.SetDeadline(time.Time{})
			l.mu.Lock()
			l.conns[c] = struct{}{}
			l.mu.Unlock()
			if l.ctx.Err() != nil {
				c.Close()
				return
			}
			if _, err = c.Do("PSUBSCRIBE", "*"); err == nil {
				if first {
					ready <- struct{}{}
					first = false
				}
				for {
					v, err := c.Receive()
					if err != nil {
						break
					}
					if a, ok := v.([]any); ok && len(a) == 4 && a[0] == "pmessage" {
						l.add(SentinelEvent{At: time.Now(), Sentinel: addr, Channel: fmt.Sprint(a[2]), Payload: fmt.Sprint(a[3])})
					}
				}
			}
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
			c.Close()
		}
		select {
		case <-l.ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *EventLog) add(e SentinelEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.added)
	l.added = make(chan struct{})
	l.mu.Unlock()
}

func (l *EventLog) close() {
	l.stop()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// Since returns the events recorded at or after t.
func (l *EventLog) Since(t time.Time) []SentinelEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []SentinelEvent
	for _, e := range l.events {
		if !e.At.Before(t) {
			out = append(out, e)
		}
	}
	return out
}

// Wait returns the first event on channel at or after t whose payload
// contains substr, waiting for it until ctx ends.
func (l *EventLog) Wait(ctx context.Context, t time.Time, channel, substr string) (SentinelEvent, error) {
	for {
		l.mu.Lock()
		for _, e := range l.events {
			if !e.At.Before(t) && e.Channel == channel && strings.Contains(e.Payload, substr) {
				l.mu.Unlock()
				return e, nil
			}
		}
		added := l.added
		l.mu.Unlock()
		select {
		case <-added:
		case <-ctx.Done():
			return SentinelEvent{}, fmt.Errorf("no %s event with %q: %w", channel, substr, ctx.Err())
		}
	}
}

// First returns the earliest event on channel at or after t, and whether
// there is one.
func (l *EventLog) First(t time.Time, channel string) (SentinelEvent, bool) {
	for _, e := range l.Since(t) {
		if e.Channel == channel {
			return e, true
		}
	}
	return SentinelEvent{}, false
}
