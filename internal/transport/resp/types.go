package resp

import (
	"errors"
	"fmt"
)

// Type is the leading byte of a RESP value.
type Type byte

// The RESP2 and RESP3 types.
const (
	TypeSimpleString Type = '+'
	TypeSimpleError  Type = '-'
	TypeInteger      Type = ':'
	TypeBulkString   Type = '$'
	TypeArray        Type = '*'
	TypeNull         Type = '_'
	TypeBoolean      Type = '#'
	TypeDouble       Type = ','
	TypeBigNumber    Type = '('
	TypeBulkError    Type = '!'
	TypeVerbatim     Type = '='
	TypeMap          Type = '%'
	TypeSet          Type = '~'
	TypeAttribute    Type = '|'
	TypePush         Type = '>'
)

// String returns a readable name for t.
func (t Type) String() string {
	switch t {
	case TypeSimpleString:
		return "simple string"
	case TypeSimpleError:
		return "simple error"
	case TypeInteger:
		return "integer"
	case TypeBulkString:
		return "bulk string"
	case TypeArray:
		return "array"
	case TypeNull:
		return "null"
	case TypeBoolean:
		return "boolean"
	case TypeDouble:
		return "double"
	case TypeBigNumber:
		return "big number"
	case TypeBulkError:
		return "bulk error"
	case TypeVerbatim:
		return "verbatim string"
	case TypeMap:
		return "map"
	case TypeSet:
		return "set"
	case TypeAttribute:
		return "attribute"
	case TypePush:
		return "push"
	}
	return fmt.Sprintf("type(%q)", byte(t))
}

// IsAggregate reports whether values of type t have children.
func (t Type) IsAggregate() bool {
	switch t {
	case TypeArray, TypeMap, TypeSet, TypeAttribute, TypePush:
		return true
	}
	return false
}

// Node is one value of a reply flattened in pre-order: an aggregate node is
// followed directly by its children (and their children), so a whole reply
// is a single reusable slice and parsing it needs neither recursion nor an
// allocation per value.
//
// An attribute node is followed by its 2*pairs children and then by the value
// it annotates; the attribute and that value together count as one element
// of the enclosing aggregate.
type Node struct {
	// Type is the type byte as received. RESP2 null bulk strings and null
	// arrays keep their type ('$' or '*') and have Null set.
	Type Type
	// Null reports a null: RESP3 '_', RESP2 "$-1" or "*-1".
	Null bool
	// side marks Data as a buffer of its own (bigbulk.go), taken once it
	// was handed over by Msg.Take.
	side, taken bool
	// Int is the integer value for integers, 0 or 1 for booleans, and the
	// number of children for aggregates (for maps and attributes it is twice
	// the number of pairs).
	Int int64
	// Float is the value of a double.
	Float float64
	// Data is the payload of simple strings, errors, bulk strings, bulk
	// errors, big numbers (the digits, with sign) and doubles (the text). For
	// verbatim strings it excludes the "fmt:" prefix, which is in Format.
	// Data aliases the reader's buffer: valid only until the next call to
	// Reader.Next (see Msg.Take for large bulk strings).
	Data []byte
	// Format is the three-byte format of a verbatim string ("txt", "mkd").
	Format [3]byte
}

// Msg is one complete top-level value, flattened. It aliases the reader's
// buffers and is valid only until the next call to Reader.Next.
type Msg []Node

// Limits bound what a server may make the reader hold. The zero value of a
// field means its default.
type Limits struct {
	// MaxBulk is the largest bulk string, bulk error or verbatim string
	// accepted, in bytes. Default 512 MiB (the server's own proto-max-bulk-len).
	MaxBulk int
	// MaxAggregate is the largest number of elements of one array, set or
	// push, or of pairs of one map or attribute. Default 1<<24.
	MaxAggregate int
	// MaxLine is the longest line accepted for simple strings, simple
	// errors, integers, doubles, big numbers and length headers. Default 64 KiB.
	MaxLine int
	// MaxDepth is the deepest nesting of aggregates accepted. Default 128.
	MaxDepth int
	// MaxNodes bounds the number of values in one reply. Default 1<<26.
	MaxNodes int
}

// Default limits.
const (
	DefaultMaxBulk      = 512 << 20
	DefaultMaxAggregate = 1 << 24
	DefaultMaxLine      = 64 << 10
	DefaultMaxDepth     = 128
	DefaultMaxNodes     = 1 << 26
)

// WithDefaults returns l with every zero field replaced by its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxBulk <= 0 {
		l.MaxBulk = DefaultMaxBulk
	}
	if l.MaxAggregate <= 0 {
		l.MaxAggregate = DefaultMaxAggregate
	}
	if l.MaxLine <= 0 {
		l.MaxLine = DefaultMaxLine
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	return l
}

// ErrProtocol is wrapped by every error that reports bytes which are not
// valid RESP or break a limit. A connection that returns it must be closed.
var ErrProtocol = errors.New("respire: protocol error")

// ProtocolError describes malformed or over-limit input.
type ProtocolError struct {
	// Offset is the byte offset in the stream where the problem was found.
	Offset int64
	// Reason says what is wrong, e.g. "bulk length 1073741824 exceeds limit 536870912".
	Reason string
}

// Error returns the offset and the reason.
func (e *ProtocolError) Error() string {
	return fmt.Sprintf("respire: protocol error at byte %d: %s", e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrProtocol) hold.
func (e *ProtocolError) Unwrap() error { return ErrProtocol }
