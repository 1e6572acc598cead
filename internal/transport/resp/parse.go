package resp

import (
	"bytes"
	"fmt"
	"strconv"
)

// parse advances through the bytes read so far. It reports done when a whole
// top-level value has been parsed, and neither done nor an error when it
// needs more bytes; all of its state lives in r, so the next call resumes
// where this one stopped.
func (r *Reader) parse() (done bool, err error) {
	for {
		if r.pendingBulk {
			ok, err := r.bulkPayload()
			if !ok || err != nil {
				return false, err
			}
			if r.finishElement() {
				return true, nil
			}
			continue
		}
		if r.pos >= r.end {
			return false, nil
		}
		at := r.pos
		t := Type(r.buf[at])
		if err := r.checkType(at, t); err != nil {
			return false, err
		}
		lo, hi, ok, err := r.line()
		if !ok || err != nil {
			return false, err
		}
		r.pos = hi + 2
		complete, err := r.value(at, t, lo, hi)
		if err != nil {
			return false, err
		}
		if complete && r.finishElement() {
			return true, nil
		}
	}
}

// checkType rejects a byte that does not start a value this reader supports.
func (r *Reader) checkType(at int, t Type) error {
	switch t {
	case TypeSimpleString, TypeSimpleError, TypeInteger, TypeBulkString, TypeArray,
		TypeNull, TypeBoolean, TypeDouble, TypeBigNumber, TypeBulkError, TypeVerbatim,
		TypeMap, TypeSet, TypeAttribute, TypePush:
		return nil
	case ';':
		return r.errorf(at, "streamed string chunk (type byte ';') is not supported")
	case '.':
		return r.errorf(at, "end of streamed aggregate (type byte '.') is not supported")
	}
	return r.errorf(at, "invalid type byte %q", byte(t))
}

// line finds the CRLF ending the line whose type byte is at r.pos. It returns
// the bounds of the text between the type byte and the CR, or ok == false
// when the CRLF has not arrived yet.
func (r *Reader) line() (lo, hi int, ok bool, err error) {
	lo = r.pos + 1
	from := lo + r.scanned
	i := bytes.IndexByte(r.buf[from:r.end], '\r')
	if i < 0 {
		r.scanned = r.end - lo
		if r.scanned > r.lim.MaxLine {
			return 0, 0, false, r.errorf(r.pos, "%s line longer than limit %d bytes (no CRLF in time)", Type(r.buf[r.pos]), r.lim.MaxLine)
		}
		return 0, 0, false, nil
	}
	hi = from + i
	if hi-lo > r.lim.MaxLine {
		return 0, 0, false, r.errorf(r.pos, "%s line longer than limit %d bytes (no CRLF in time)", Type(r.buf[r.pos]), r.lim.MaxLine)
	}
	if hi+1 >= r.end {
		r.scanned = hi - lo
		return 0, 0, false, nil
	}
	if r.buf[hi+1] != '\n' {
		return 0, 0, false, r.errorf(hi, "CR not followed by LF (got %q) in %s line", r.buf[hi+1], Type(r.buf[r.pos]))
	}
	if j := bytes.IndexByte(r.buf[lo:hi], '\n'); j >= 0 {
		return 0, 0, false, r.errorf(lo+j, "bare LF in %s line %s", Type(r.buf[r.pos]), quote(r.buf[lo:hi]))
	}
	r.scanned = 0
	return lo, hi, true, nil
}

// value handles a value whose header line buf[lo:hi] has been read. It
// reports complete when the value is a finished element (a scalar, or an
// empty aggregate other than an attribute).
func (r *Reader) value(at int, t Type, lo, hi int) (complete bool, err error) {
	text := r.buf[lo:hi]
	switch t {
	case TypeSimpleString, TypeSimpleError:
		return true, r.add(at, Node{Type: t}, lo-r.start, hi-lo)
	case TypeInteger:
		v, ok := parseInt(text)
		if !ok {
			return false, r.errorf(at, "invalid integer %s", quote(text))
		}
		return true, r.add(at, Node{Type: t, Int: v}, 0, -1)
	case TypeNull:
		if len(text) != 0 {
			return false, r.errorf(at, "null followed by %s instead of CRLF", quote(text))
		}
		return true, r.add(at, Node{Type: t, Null: true}, 0, -1)
	case TypeBoolean:
		if len(text) != 1 || (text[0] != 't' && text[0] != 'f') {
			return false, r.errorf(at, "invalid boolean %s (want t or f)", quote(text))
		}
		var v int64
		if text[0] == 't' {
			v = 1
		}
		return true, r.add(at, Node{Type: t, Int: v}, 0, -1)
	case TypeDouble:
		f, ok := parseDouble(text)
		if !ok {
			return false, r.errorf(at, "invalid double %s", quote(text))
		}
		return true, r.add(at, Node{Type: t, Float: f}, lo-r.start, hi-lo)
	case TypeBigNumber:
		if !validBigNumber(text) {
			return false, r.errorf(at, "invalid big number %s", quote(text))
		}
		return true, r.add(at, Node{Type: t}, lo-r.start, hi-lo)
	case TypeBulkString, TypeBulkError, TypeVerbatim:
		return r.bulkHeader(at, t, text)
	default: // aggregates; checkType let nothing else through
		return r.aggregateHeader(at, t, text)
	}
}

// bulkHeader handles "$<len>", "!<len>" and "=<len>".
func (r *Reader) bulkHeader(at int, t Type, text []byte) (complete bool, err error) {
	n, err := r.length(at, t, text)
	if err != nil {
		return false, err
	}
	if n < 0 {
		return true, r.add(at, Node{Type: t, Null: true}, 0, -1)
	}
	if n > int64(r.lim.MaxBulk) {
		return false, r.errorf(at, "%s length %d exceeds limit %d", t, n, r.lim.MaxBulk)
	}
	if t == TypeVerbatim && n < 4 {
		return false, r.errorf(at, "verbatim string length %d is shorter than its 4-byte format prefix", n)
	}
	if err := r.add(at, Node{Type: t}, r.pos-r.start, int(n)); err != nil {
		return false, err
	}
	r.pendingBulk, r.bulkLen = true, int(n)
	if t == TypeBulkString && n >= SideBulk && n <= maxSideBulk && int64(r.end-r.pos) < n+2 {
		r.startSide(int(n))
	}
	return false, nil
}

// bulkPayload completes the pending bulk value once its payload and CRLF
// have arrived.
func (r *Reader) bulkPayload() (ok bool, err error) {
	if r.side != nil {
		return r.sidePayload()
	}
	if r.end-r.pos < r.bulkLen+2 {
		return false, nil
	}
	end := r.pos + r.bulkLen
	if r.buf[end] != '\r' || r.buf[end+1] != '\n' {
		return false, r.errorf(end, "%d-byte bulk payload not followed by CRLF (got %q)", r.bulkLen, r.buf[end:end+2])
	}
	last := len(r.nodes) - 1
	if n := &r.nodes[last]; n.Type == TypeVerbatim {
		p := r.buf[r.pos:end]
		if p[3] != ':' {
			return false, r.errorf(r.pos, "verbatim string prefix %s lacks ':' after the 3-byte format", quote(p[:4]))
		}
		copy(n.Format[:], p[:3])
		r.spans[last].off += 4
		r.spans[last].n -= 4
	}
	r.pos = end + 2
	r.pendingBulk, r.bulkLen = false, 0
	return true, nil
}

// aggregateHeader handles arrays, maps, sets, attributes and pushes.
func (r *Reader) aggregateHeader(at int, t Type, text []byte) (complete bool, err error) {
	n, err := r.length(at, t, text)
	if err != nil {
		return false, err
	}
	if n < 0 {
		return true, r.add(at, Node{Type: t, Null: true}, 0, -1)
	}
	if n > int64(r.lim.MaxAggregate) {
		return false, r.errorf(at, "%s of %d elements exceeds limit %d", t, n, r.lim.MaxAggregate)
	}
	if t == TypeMap || t == TypeAttribute {
		n *= 2
	}
	if err := r.add(at, Node{Type: t, Int: n}, 0, -1); err != nil {
		return false, err
	}
	if n == 0 {
		// An empty attribute annotates the value that follows it; an empty
		// aggregate of any other type is a finished element.
		return t != TypeAttribute, nil
	}
	if len(r.stack) >= r.lim.MaxDepth {
		return false, r.errorf(at, "nesting deeper than limit %d", r.lim.MaxDepth)
	}
	r.stack = append(r.stack, frame{rem: n, attr: t == TypeAttribute})
	return false, nil
}

// length parses the length of a bulk or aggregate header. It returns -1 for
// the RESP2 nulls "$-1" and "*-1" and rejects every other negative length.
func (r *Reader) length(at int, t Type, text []byte) (int64, error) {
	if len(text) == 1 && text[0] == '?' {
		return 0, r.errorf(at, "streamed %s (length '?') is not supported", t)
	}
	if len(text) == 2 && text[0] == '-' && text[1] == '1' {
		if t == TypeBulkString || t == TypeArray {
			return -1, nil
		}
		return 0, r.errorf(at, "null length -1 is not valid for %s (only RESP2 bulk strings and arrays)", t)
	}
	if len(text) > 0 && text[0] == '-' {
		return 0, r.errorf(at, "negative %s length %s", t, quote(text))
	}
	n, ok := parseUint(text)
	if !ok {
		return 0, r.errorf(at, "invalid %s length %s", t, quote(text))
	}
	return n, nil
}

// add appends a node whose payload, if any, is n bytes at offset off from the
// start of the message; n < 0 means no payload.
func (r *Reader) add(at int, nd Node, off, n int) error {
	if len(r.nodes) >= r.lim.MaxNodes {
		return r.errorf(at, "reply has more than %d values (limit)", r.lim.MaxNodes)
	}
	r.nodes = append(r.nodes, nd)
	r.spans = append(r.spans, span{off: off, n: n})
	return nil
}

// finishElement records that one element is complete and closes every
// aggregate it completes. It reports whether the top-level value is done.
func (r *Reader) finishElement() bool {
	for {
		if len(r.stack) == 0 {
			return true
		}
		top := &r.stack[len(r.stack)-1]
		if top.rem--; top.rem > 0 {
			return false
		}
		attr := top.attr
		r.stack = r.stack[:len(r.stack)-1]
		if attr {
			// The annotated value follows; it is the element.
			return false
		}
	}
}

// errorf returns a *ProtocolError at buffer index at.
func (r *Reader) errorf(at int, format string, args ...any) error {
	return &ProtocolError{Offset: r.base + int64(at), Reason: fmt.Sprintf(format, args...)}
}

// quote renders untrusted bytes for an error message, cut to a short prefix.
func quote(b []byte) string {
	const max = 32
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return strconv.Quote(string(b))
}
