package harness

import "github.com/respire-go/respire/respiretest/testserver"

// ServerError is an error reply (a RESP "-" line) from the server, such as
// "NOAUTH Authentication required.". The harness talks to servers with
// testserver's RESP client, which shares no code with the client under
// test.
type ServerError = testserver.ServerError
