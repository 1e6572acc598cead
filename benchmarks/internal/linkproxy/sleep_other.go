//go:build !linux

package linkproxy

import "time"

func preciseSleeps() {}

// sleepUntil sleeps until t with the runtime's timers.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
