//go:build !unix

package respiretest

import "os"

// Neither signal exists here: Node.Stop and Node.Continue return an error
// wrapping errors.ErrUnsupported.
var sigStop, sigCont os.Signal
