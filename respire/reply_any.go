package respire

import (
	"strconv"
	"strings"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Any returns the reply as plain Go values, for code that handles replies
// generically (a REPL, a JSON encoder, an adapter for another client's
// interface):
//
//   - simple, bulk and verbatim strings: string (a verbatim string without
//     its format, "txt" say);
//   - integers: int64; doubles: float64 (inf and nan included); booleans:
//     bool;
//   - big numbers: string, their decimal digits with sign (math/big's
//     SetString reads them), since they do not fit an int64;
//   - nulls (RESP3 null, RESP2 null bulk string or null array): nil;
//   - arrays, sets and pushes: []any, in the server's order;
//   - maps: map[string]any, keyed by each key's text (a key that is not a
//     string is formatted as String formats it); the order is lost;
//   - error replies nested in an aggregate (EXEC's replies, say): an
//     *Error, which is an error;
//   - attributes sent in front of a value are dropped: Attributes returns
//     them.
//
// RESP2 sends maps as flat arrays of keys and values, so that on a RESP2
// connection Any returns HGETALL's reply as a []any: Map reads both forms.
func (r Reply) Any() any { return plain(r.v) }

func plain(v resp.Value) any {
	if v.Null || v.Type == resp.TypeNull {
		return nil
	}
	switch v.Type {
	case resp.TypeInteger:
		return v.Int
	case resp.TypeBoolean:
		return v.Int != 0
	case resp.TypeDouble:
		return v.Float
	case resp.TypeSimpleError, resp.TypeBulkError:
		return newError("", v.Str)
	case resp.TypeArray, resp.TypeSet, resp.TypePush:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = plain(e)
		}
		return out
	case resp.TypeMap, resp.TypeAttribute:
		out := make(map[string]any, len(v.Elems)/2)
		for i := 0; i+1 < len(v.Elems); i += 2 {
			out[mapKey(v.Elems[i])] = plain(v.Elems[i+1])
		}
		return out
	}
	return v.Str // strings, verbatim strings, big numbers
}

// mapKey is the text of a map key: a string's own text, anything else as
// String formats it.
func mapKey(k resp.Value) string {
	switch k.Type {
	case resp.TypeSimpleString, resp.TypeBulkString, resp.TypeVerbatim, resp.TypeBigNumber:
		if !k.Null {
			return k.Str
		}
	}
	return Reply{k}.String()
}

// String formats the reply for people (logs, fmt.Println, a REPL), on one
// line: a string at the top is its text as it is, and inside an aggregate
// it is quoted; integers and doubles in decimal; booleans true and false;
// a null (nil); an error reply (error) and its message; arrays, sets and
// pushes [a b c]; maps {k: v, k2: v2} in the server's order. Attributes
// are left out. The form is for reading, not parsing: use Any or the
// typed accessors in code.
func (r Reply) String() string {
	switch r.v.Type {
	case resp.TypeSimpleString, resp.TypeBulkString, resp.TypeVerbatim:
		if !r.v.Null {
			return r.v.Str
		}
	}
	var b strings.Builder
	writeReply(&b, r.v)
	return b.String()
}

func writeReply(b *strings.Builder, v resp.Value) {
	if v.Null || v.Type == resp.TypeNull {
		b.WriteString("(nil)")
		return
	}
	switch v.Type {
	case resp.TypeSimpleString, resp.TypeBulkString, resp.TypeVerbatim:
		b.WriteString(strconv.Quote(v.Str))
	case resp.TypeInteger:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case resp.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Int != 0))
	case resp.TypeDouble:
		b.WriteString(strconv.FormatFloat(v.Float, 'g', -1, 64))
	case resp.TypeBigNumber:
		b.WriteString(v.Str)
	case resp.TypeSimpleError, resp.TypeBulkError:
		b.WriteString("(error) ")
		b.WriteString(v.Str)
	case resp.TypeArray, resp.TypeSet, resp.TypePush:
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteByte(' ')
			}
			writeReply(b, e)
		}
		b.WriteByte(']')
	case resp.TypeMap, resp.TypeAttribute:
		b.WriteByte('{')
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			writeReply(b, v.Elems[i])
			b.WriteString(": ")
			writeReply(b, v.Elems[i+1])
		}
		b.WriteByte('}')
	default:
		b.WriteString(strconv.Quote(v.Str))
	}
}
