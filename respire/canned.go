package respire

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Canned is a reply that an interceptor gives a command instead of the
// server's (Command.Reply): built with CannedString, CannedInt and the
// other constructors, nested with CannedArray and CannedMap. The command
// decodes it as it would the server's reply, so a typed method returns
// what it would have: Get a string, Incr an int64, a null Nil.
type Canned struct {
	raw []byte
	err error
}

// CannedString is a bulk string reply.
func CannedString(s string) Canned {
	b := append([]byte{'$'}, strconv.Itoa(len(s))...)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return Canned{raw: append(b, "\r\n"...)}
}

// CannedStatus is a simple string reply, such as SET's OK or TYPE's
// "string". s must not hold CR or LF.
func CannedStatus(s string) Canned {
	if strings.ContainsAny(s, "\r\n") {
		return Canned{err: misuse("CannedStatus %q holds CR or LF", s)}
	}
	return Canned{raw: []byte("+" + s + "\r\n")}
}

// CannedOK is the simple string reply OK.
func CannedOK() Canned { return CannedStatus("OK") }

// CannedInt is an integer reply.
func CannedInt(n int64) Canned {
	return Canned{raw: append(strconv.AppendInt([]byte{':'}, n, 10), "\r\n"...)}
}

// CannedFloat is a double reply (RESP3; a RESP2 server sends it as a bulk
// string, which the command decodes alike).
func CannedFloat(f float64) Canned {
	var b []byte
	switch {
	case math.IsInf(f, 1):
		b = []byte(",inf")
	case math.IsInf(f, -1):
		b = []byte(",-inf")
	case math.IsNaN(f):
		b = []byte(",nan")
	default:
		b = strconv.AppendFloat([]byte{','}, f, 'g', -1, 64)
	}
	return Canned{raw: append(b, "\r\n"...)}
}

// CannedBool is a boolean reply (RESP3).
func CannedBool(v bool) Canned {
	if v {
		return Canned{raw: []byte("#t\r\n")}
	}
	return Canned{raw: []byte("#f\r\n")}
}

// CannedNil is a null reply: a typed method returns Nil, Do a null Reply.
func CannedNil() Canned { return Canned{raw: []byte("_\r\n")} }

// CannedError is an error reply, msg as the server would send it, its
// first word the prefix: "ERR something failed", "WRONGTYPE ...". The
// caller gets it as an *Error. msg must not hold CR or LF.
func CannedError(msg string) Canned {
	if msg == "" || strings.ContainsAny(msg, "\r\n") {
		return Canned{err: misuse("CannedError %q is empty or holds CR or LF", msg)}
	}
	return Canned{raw: []byte("-" + msg + "\r\n")}
}

// CannedArray is an array reply of elems.
func CannedArray(elems ...Canned) Canned { return cannedAggregate('*', len(elems), elems) }

// CannedMap is a map reply (RESP3) of keys and values in turn: key, value,
// key, value. An odd number of arguments is an error.
func CannedMap(kv ...Canned) Canned {
	if len(kv)%2 != 0 {
		return Canned{err: misuse("CannedMap of %d arguments: keys and values come in pairs", len(kv))}
	}
	return cannedAggregate('%', len(kv)/2, kv)
}

func cannedAggregate(kind byte, n int, elems []Canned) Canned {
	b := append([]byte{kind}, strconv.Itoa(n)...)
	b = append(b, "\r\n"...)
	for _, e := range elems {
		if e.err != nil {
			return Canned{err: e.err}
		}
		if e.raw == nil {
			return Canned{err: misuse("a zero Canned in an aggregate: use a constructor")}
		}
		b = append(b, e.raw...)
	}
	return Canned{raw: b}
}

// cannedParser reads canned replies; pooled, as a reader's buffers are
// large.
type cannedParser struct {
	src bytes.Reader
	rd  *resp.Reader
}

var cannedParsers = sync.Pool{New: func() any {
	p := &cannedParser{}
	p.rd = resp.NewReader(&p.src, resp.Limits{})
	return p
}}

// deliver parses c as the reader would the server's reply and hands it to
// x, as the connection would.
func (c Canned) deliver(x *cmd) error {
	if c.raw == nil {
		return misuse("a zero Canned: use a constructor")
	}
	p := cannedParsers.Get().(*cannedParser)
	defer cannedParsers.Put(p)
	p.src.Reset(c.raw)
	p.rd.Reset(&p.src)
	m, err := p.rd.Next()
	if err != nil {
		return fmt.Errorf("respire: canned reply: %w", err)
	}
	x.HandleReply(m)
	return nil
}
