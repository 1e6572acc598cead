package resp

import (
	"math"
	"strconv"
)

// AppendValue appends the RESP encoding of v to dst: its attributes first
// (one attribute holding all of v.Attrs), then the value. It is the inverse
// of Msg.Tree for canonical input and is meant for fixtures, round trips and
// test servers.
//
// Encoding rules: a null with Type '$' or '*' is written as the RESP2 null
// "$-1" or "*-1", any other null (or the zero Type) as RESP3 "_"; a double
// with a non-empty Str is written as that text, otherwise from Float; a map
// or attribute with an odd number of Elems drops the last one; a verbatim
// Format is cut or padded with spaces to three bytes ("txt" when empty).
// Unknown types are written as "_". It uses an explicit stack, not
// recursion.
func AppendValue(dst []byte, v Value) []byte {
	type item struct {
		v         *Value
		attrsDone bool
	}
	var small [16]item
	stack := append(small[:0], item{v: &v})
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x := it.v
		if x.Attrs != nil && !it.attrsDone {
			pairs := len(x.Attrs) / 2
			dst = appendHeader(dst, TypeAttribute, pairs)
			stack = append(stack, item{v: x, attrsDone: true})
			for i := 2*pairs - 1; i >= 0; i-- {
				stack = append(stack, item{v: &x.Attrs[i]})
			}
			continue
		}
		if x.Null || x.Type == 0 {
			switch x.Type {
			case TypeBulkString, TypeArray:
				dst = append(dst, byte(x.Type), '-', '1', '\r', '\n')
			default:
				dst = append(dst, '_', '\r', '\n')
			}
			continue
		}
		switch x.Type {
		case TypeArray, TypeSet, TypePush, TypeMap, TypeAttribute:
			n := len(x.Elems)
			count := n
			if x.Type == TypeMap || x.Type == TypeAttribute {
				count = n / 2
				n = 2 * count
			}
			dst = appendHeader(dst, x.Type, count)
			for i := n - 1; i >= 0; i-- {
				stack = append(stack, item{v: &x.Elems[i]})
			}
		default:
			dst = appendScalar(dst, x)
		}
	}
	return dst
}

// appendScalar encodes a non-null value without children.
func appendScalar(dst []byte, x *Value) []byte {
	switch x.Type {
	case TypeSimpleString, TypeSimpleError, TypeBigNumber:
		dst = append(dst, byte(x.Type))
		dst = append(dst, x.Str...)
		return append(dst, '\r', '\n')
	case TypeInteger:
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, x.Int, 10)
		return append(dst, '\r', '\n')
	case TypeBoolean:
		c := byte('f')
		if x.Int != 0 {
			c = 't'
		}
		return append(dst, '#', c, '\r', '\n')
	case TypeDouble:
		dst = append(dst, ',')
		dst = appendDoubleText(dst, x)
		return append(dst, '\r', '\n')
	case TypeBulkString, TypeBulkError:
		dst = appendHeader(dst, x.Type, len(x.Str))
		dst = append(dst, x.Str...)
		return append(dst, '\r', '\n')
	case TypeVerbatim:
		format := [3]byte{'t', 'x', 't'}
		if x.Format != "" {
			format = [3]byte{' ', ' ', ' '}
			copy(format[:], x.Format)
		}
		dst = appendHeader(dst, x.Type, len(x.Str)+4)
		dst = append(dst, format[:]...)
		dst = append(dst, ':')
		dst = append(dst, x.Str...)
		return append(dst, '\r', '\n')
	}
	return append(dst, '_', '\r', '\n')
}

// appendDoubleText writes the text of a double.
func appendDoubleText(dst []byte, x *Value) []byte {
	switch {
	case x.Str != "":
		return append(dst, x.Str...)
	case math.IsInf(x.Float, 1):
		return append(dst, "inf"...)
	case math.IsInf(x.Float, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(x.Float):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, x.Float, 'g', -1, 64)
}

// appendHeader writes "<type><n>\r\n".
func appendHeader(dst []byte, t Type, n int) []byte {
	dst = append(dst, byte(t))
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}
