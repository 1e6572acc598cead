package goredis

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/respire-go/respire/respire"
)

// The adapter's connections (vconn) speak RESP with go-redis: go-redis
// writes commands as it writes them to a server, and reads back replies
// that the adapter encodes from what Respire received. This file holds
// both directions.

// appendReply writes r as the server sent it, in the same RESP type, so
// that go-redis reads it exactly as it would have read the server's own
// frame. proto is the protocol go-redis believes it speaks, which decides
// only how a null is written.
func appendReply(b []byte, r respire.Reply, proto int) []byte {
	switch r.Type() {
	case respire.ReplyNull:
		if proto == 3 {
			return append(b, "_\r\n"...)
		}
		return append(b, "$-1\r\n"...)
	case respire.ReplyStatus:
		s, _ := r.Text()
		return appendLine(b, '+', s)
	case respire.ReplyError:
		return appendLine(b, '-', errMessage(r.Err()))
	case respire.ReplyInteger:
		n, _ := r.Int64()
		return appendInt(b, ':', n)
	case respire.ReplyString:
		s, _ := r.Text()
		return appendBulk(b, '$', s)
	case respire.ReplyVerbatim:
		s, _ := r.Text()
		return appendBulk(b, '=', r.VerbatimFormat()+":"+s)
	case respire.ReplyBool:
		if v, _ := r.Bool(); v {
			return append(b, "#t\r\n"...)
		}
		return append(b, "#f\r\n"...)
	case respire.ReplyDouble:
		s, _ := r.Text()
		if s == "" {
			f, _ := r.Float64()
			s = formatDouble(f)
		}
		return appendLine(b, ',', s)
	case respire.ReplyBigNumber:
		s, _ := r.Text()
		return appendLine(b, '(', s)
	case respire.ReplyArray, respire.ReplySet, respire.ReplyPush, respire.ReplyMap:
		n := r.Len()
		lead := byte('*')
		switch r.Type() {
		case respire.ReplySet:
			lead = '~'
		case respire.ReplyPush:
			lead = '>'
		case respire.ReplyMap:
			lead, n = '%', n/2
		}
		b = appendInt(b, lead, int64(n))
		for i := range r.Len() {
			b = appendReply(b, r.Index(i), proto)
		}
		return b
	}
	// Not a reply go-redis could have received: say so in its place.
	return appendLine(b, '-', fmt.Sprintf("ERR goredis: cannot relay a reply of type %v", r.Type()))
}

// errMessage is the server's message of an error reply.
func errMessage(err error) string {
	var e *respire.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "ERR " + err.Error()
}

func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func appendLine(b []byte, lead byte, s string) []byte {
	b = append(b, lead)
	// A line cannot hold CR or LF; servers never send them there.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\r' || c == '\n' {
			b = append(b, ' ')
		} else {
			b = append(b, c)
		}
	}
	return append(b, '\r', '\n')
}

func appendInt(b []byte, lead byte, n int64) []byte {
	b = append(b, lead)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, lead byte, s string) []byte {
	b = appendInt(b, lead, int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendStrings writes an array (proto 2) or a push (proto 3) of bulk
// strings, a nil element as a null: the frames of pub/sub.
func appendStrings(b []byte, push bool, proto int, elems ...any) []byte {
	lead := byte('*')
	if push && proto == 3 {
		lead = '>'
	}
	b = appendInt(b, lead, int64(len(elems)))
	for _, e := range elems {
		switch e := e.(type) {
		case string:
			b = appendBulk(b, '$', e)
		case int:
			b = appendInt(b, ':', int64(e))
		default:
			if proto == 3 {
				b = append(b, "_\r\n"...)
			} else {
				b = append(b, "$-1\r\n"...)
			}
		}
	}
	return b
}

// errIncomplete reports a command not yet entirely written.
var errIncomplete = errors.New("incomplete command")

// maxCommandBytes bounds what one command may take before it is refused:
// go-redis sends nothing that large to the adapter's connections.
const maxCommandBytes = 64 << 20

// readCommand takes the first command (an array of bulk strings, as
// go-redis writes every command) off b, returning its words and the bytes
// it used; errIncomplete when b holds only part of it.
func readCommand(b []byte) (words []string, used int, err error) {
	line, rest, ok := cutLine(b)
	if !ok {
		return nil, 0, errIncomplete
	}
	if len(line) < 2 || line[0] != '*' {
		return nil, 0, fmt.Errorf("goredis: connection: a command is an array, not %q", truncate(line))
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n < 0 || n > 1<<20 {
		return nil, 0, fmt.Errorf("goredis: connection: bad array length %q", truncate(line))
	}
	used = len(b) - len(rest)
	words = make([]string, 0, n)
	for range n {
		line, after, ok := cutLine(b[used:])
		if !ok {
			return nil, 0, errIncomplete
		}
		if len(line) < 2 || line[0] != '$' {
			return nil, 0, fmt.Errorf("goredis: connection: an argument is a bulk string, not %q", truncate(line))
		}
		size, err := strconv.Atoi(string(line[1:]))
		if err != nil || size < 0 || size > maxCommandBytes {
			return nil, 0, fmt.Errorf("goredis: connection: bad bulk length %q", truncate(line))
		}
		start := len(b) - len(after)
		if len(b)-start < size+2 {
			return nil, 0, errIncomplete
		}
		if len(words) == 0 || !strings.HasPrefix(words[0], replayPrefix) {
			// A replayed command is known by its first word alone.
			words = append(words, string(b[start:start+size]))
		}
		used = start + size + 2
	}
	return words, used, nil
}

func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, b, false
	}
	return b[:i], b[i+2:], true
}

func truncate(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}
