//go:build !unix

package transport

// openFileLimit is unknown on this platform.
func openFileLimit() int { return 0 }

// outOfDescriptors cannot tell on this platform.
func outOfDescriptors(error) bool { return false }
