//go:build !linux

package main

import "errors"

// pinThread is not available here: -busy-pin needs Linux.
func pinThread(int) error { return errors.New("-busy-pin needs Linux") }
