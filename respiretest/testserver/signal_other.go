//go:build !unix

package testserver

import "os"

// None of these signals exists here: Terminate kills, Pause and Resume
// return an error wrapping errors.ErrUnsupported.
var sigTerm, sigStop, sigCont os.Signal
