package respire

import (
	"fmt"
	"math"
	"strconv"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Reply is a generic reply, as returned by Do. Its accessors convert it to
// Go types and return an error naming the mismatch when they cannot; an
// error reply nested in an aggregate (EXEC) is returned by its accessors as
// an *Error, and a null as Nil.
type Reply struct {
	v resp.Value
}

// Type returns the kind of the reply: ReplyString, ReplyInteger,
// ReplyArray and so on; ReplyNull for a null of either protocol.
func (r Reply) Type() ReplyType { return replyType(&r.v) }

// Len returns the number of elements of an aggregate reply (array, set,
// push), or twice the number of pairs of a map (keys and values
// alternate); 0 for any other reply.
func (r Reply) Len() int {
	if r.v.Null {
		return 0
	}
	return len(r.v.Elems)
}

// Index returns element i of an aggregate reply, in the server's order; for
// a map, keys are at even and values at odd indexes. With Len it walks an
// aggregate without the allocation of Slice. An index out of range gives a
// zero Reply, of type ReplyInvalid, whose accessors return an error.
func (r Reply) Index(i int) Reply {
	if r.v.Null || i < 0 || i >= len(r.v.Elems) {
		return Reply{}
	}
	return Reply{r.v.Elems[i]}
}

// VerbatimFormat returns the format of a verbatim string reply ("txt" for plain
// text, "mkd" for markdown), or "" for any other reply.
func (r Reply) VerbatimFormat() string {
	if r.v.Type != resp.TypeVerbatim || r.v.Null {
		return ""
	}
	return r.v.Format
}

// Attributes returns the RESP3 attributes the server sent in front of the
// reply (metadata such as key popularity, which most servers never send)
// as a reply of type ReplyMap, and false if there were none.
func (r Reply) Attributes() (Reply, bool) {
	if r.v.Attrs == nil {
		return Reply{}, false
	}
	return Reply{resp.Value{Type: resp.TypeMap, Elems: r.v.Attrs}}, true
}

// IsNull reports a null reply.
func (r Reply) IsNull() bool { return r.v.Null || r.v.Type == resp.TypeNull }

// Err returns the error carried by an error reply, or nil.
func (r Reply) Err() error {
	switch {
	case r.v.Type == resp.TypeSimpleError || r.v.Type == resp.TypeBulkError:
		return newError("", r.v.Str)
	case r.IsNull():
		return Nil
	}
	return nil
}

func (r Reply) mismatch(want string) error {
	if err := r.Err(); err != nil {
		return err
	}
	return fmt.Errorf("respire: reply is %s, not %s", r.Type(), want)
}

// Text returns a string-like reply (simple, bulk or verbatim string, double
// or big number as text, integer in decimal).
func (r Reply) Text() (string, error) {
	switch r.v.Type {
	case resp.TypeSimpleString, resp.TypeBulkString, resp.TypeVerbatim, resp.TypeBigNumber, resp.TypeDouble:
		if !r.v.Null {
			return r.v.Str, nil
		}
	case resp.TypeInteger:
		return strconv.FormatInt(r.v.Int, 10), nil
	}
	return "", r.mismatch("a string")
}

// Bytes returns a string-like reply as a new byte slice.
func (r Reply) Bytes() ([]byte, error) {
	s, err := r.Text()
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// Int64 returns an integer reply, or a string reply holding an integer.
func (r Reply) Int64() (int64, error) {
	switch r.v.Type {
	case resp.TypeInteger, resp.TypeBoolean:
		return r.v.Int, nil
	case resp.TypeSimpleString, resp.TypeBulkString:
		if !r.v.Null {
			i, err := strconv.ParseInt(r.v.Str, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("respire: reply %q is not an integer", r.v.Str)
			}
			return i, nil
		}
	}
	return 0, r.mismatch("an integer")
}

// Float64 returns a double reply (RESP3), or a string or integer reply
// holding a number (RESP2).
func (r Reply) Float64() (float64, error) {
	switch r.v.Type {
	case resp.TypeDouble:
		return r.v.Float, nil
	case resp.TypeInteger:
		return float64(r.v.Int), nil
	case resp.TypeSimpleString, resp.TypeBulkString:
		if !r.v.Null {
			return parseFloat(r.v.Str)
		}
	}
	return 0, r.mismatch("a number")
}

func parseFloat(s string) (float64, error) {
	switch s {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("respire: reply %q is not a number", s)
	}
	return f, nil
}

// Bool returns a boolean reply (RESP3), or an integer 0/1 (RESP2), or true
// for the status OK.
func (r Reply) Bool() (bool, error) {
	switch r.v.Type {
	case resp.TypeBoolean, resp.TypeInteger:
		return r.v.Int != 0, nil
	case resp.TypeSimpleString:
		return r.v.Str == "OK", nil
	}
	return false, r.mismatch("a boolean")
}

// Slice returns the elements of an array, set or push reply. A map reply
// is returned as alternating keys and values, as RESP2 sends it.
func (r Reply) Slice() ([]Reply, error) {
	switch r.v.Type {
	case resp.TypeArray, resp.TypeSet, resp.TypePush, resp.TypeMap:
		if !r.v.Null {
			out := make([]Reply, len(r.v.Elems))
			for i, e := range r.v.Elems {
				out[i] = Reply{e}
			}
			return out, nil
		}
	}
	return nil, r.mismatch("an array")
}

// Map returns a map reply (RESP3), or an array of alternating keys and
// values (RESP2), keyed by the keys' text.
func (r Reply) Map() (map[string]Reply, error) {
	switch r.v.Type {
	case resp.TypeMap, resp.TypeArray:
		if r.v.Null {
			break
		}
		if len(r.v.Elems)%2 != 0 {
			return nil, fmt.Errorf("respire: array of %d elements is not a map", len(r.v.Elems))
		}
		out := make(map[string]Reply, len(r.v.Elems)/2)
		for i := 0; i < len(r.v.Elems); i += 2 {
			k, err := Reply{r.v.Elems[i]}.Text()
			if err != nil {
				return nil, fmt.Errorf("respire: map key %d: %w", i/2, err)
			}
			out[k] = Reply{r.v.Elems[i+1]}
		}
		return out, nil
	}
	return nil, r.mismatch("a map")
}
