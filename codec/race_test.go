//go:build race

package codec_test

// raceEnabled: sync.Pool drops items at random under the race detector, so
// allocation counts mean nothing there, and big inputs are slow.
const raceEnabled = true
