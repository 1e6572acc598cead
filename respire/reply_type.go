package respire

import (
	"strconv"

	"github.com/respire-go/respire/internal/transport/resp"
)

// ReplyType is the kind of a generic Reply, as the server sent it. RESP2
// has the first five kinds; RESP3 adds the others. A null of either
// protocol (RESP3's null, RESP2's null bulk string or null array) is
// ReplyNull, so that code testing for it need not know the protocol.
type ReplyType uint8

// The kinds of Reply.
const (
	// ReplyInvalid is the type of the zero Reply, which no server sent.
	ReplyInvalid ReplyType = iota
	// ReplyStatus is a simple string: OK, PONG, a type name.
	ReplyStatus
	// ReplyError is an error reply, simple or bulk; Err returns it.
	ReplyError
	// ReplyInteger is an integer.
	ReplyInteger
	// ReplyString is a bulk string: binary-safe data.
	ReplyString
	// ReplyArray is an array; Len and Index read its elements.
	ReplyArray
	// ReplyNull is a null, of RESP3 or RESP2.
	ReplyNull
	// ReplyBool is a RESP3 boolean.
	ReplyBool
	// ReplyDouble is a RESP3 double.
	ReplyDouble
	// ReplyBigNumber is a RESP3 big number; Text returns its digits.
	ReplyBigNumber
	// ReplyVerbatim is a RESP3 verbatim string; it gives its format
	// ("txt", "mkd") with VerbatimFormat and Text its text.
	ReplyVerbatim
	// ReplyMap is a RESP3 map; Len and Index read its keys and values,
	// alternating.
	ReplyMap
	// ReplySet is a RESP3 set; Len and Index read its elements.
	ReplySet
	// ReplyPush is a RESP3 push, out-of-band data such as a pub/sub
	// message.
	ReplyPush
)

var replyTypeNames = [...]string{
	ReplyInvalid:   "invalid",
	ReplyStatus:    "status",
	ReplyError:     "error",
	ReplyInteger:   "integer",
	ReplyString:    "string",
	ReplyArray:     "array",
	ReplyNull:      "null",
	ReplyBool:      "boolean",
	ReplyDouble:    "double",
	ReplyBigNumber: "big number",
	ReplyVerbatim:  "verbatim string",
	ReplyMap:       "map",
	ReplySet:       "set",
	ReplyPush:      "push",
}

// String returns the type's name: "status", "integer", "map".
func (t ReplyType) String() string {
	if int(t) < len(replyTypeNames) {
		return replyTypeNames[t]
	}
	return "ReplyType(" + strconv.Itoa(int(t)) + ")"
}

// IsAggregate reports whether replies of type t have elements (array, map,
// set, push).
func (t ReplyType) IsAggregate() bool {
	switch t {
	case ReplyArray, ReplyMap, ReplySet, ReplyPush:
		return true
	}
	return false
}

// replyType maps the wire's type byte to a ReplyType.
func replyType(v *resp.Value) ReplyType {
	if v.Null {
		return ReplyNull
	}
	switch v.Type {
	case resp.TypeSimpleString:
		return ReplyStatus
	case resp.TypeSimpleError, resp.TypeBulkError:
		return ReplyError
	case resp.TypeInteger:
		return ReplyInteger
	case resp.TypeBulkString:
		return ReplyString
	case resp.TypeArray:
		return ReplyArray
	case resp.TypeNull:
		return ReplyNull
	case resp.TypeBoolean:
		return ReplyBool
	case resp.TypeDouble:
		return ReplyDouble
	case resp.TypeBigNumber:
		return ReplyBigNumber
	case resp.TypeVerbatim:
		return ReplyVerbatim
	case resp.TypeMap, resp.TypeAttribute:
		return ReplyMap
	case resp.TypeSet:
		return ReplySet
	case resp.TypePush:
		return ReplyPush
	}
	return ReplyInvalid
}
