package resp

import (
	"math"
	"strconv"
)

// Commands go from client to server as an array of bulk strings. These
// functions append that encoding to a caller's buffer and allocate nothing
// when it has room.

// AppendArrayLen appends an array header "*<n>\r\n".
func AppendArrayLen(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulk appends b as a bulk string "$<len>\r\n<b>\r\n".
func AppendBulk(dst []byte, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendBulkInt appends the decimal text of v as a bulk string.
func AppendBulkInt(dst []byte, v int64) []byte {
	mark := len(dst)
	return bulkFromTail(strconv.AppendInt(dst, v, 10), mark)
}

// AppendBulkUint appends the decimal text of v as a bulk string.
func AppendBulkUint(dst []byte, v uint64) []byte {
	mark := len(dst)
	return bulkFromTail(strconv.AppendUint(dst, v, 10), mark)
}

// AppendBulkFloat appends f as a bulk string in the shortest decimal form
// that reads back as f, without exponent; infinities become "inf" and
// "-inf", as the server expects. NaN is not a valid argument for any
// command: callers must reject it before encoding.
func AppendBulkFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return AppendBulkString(dst, "inf")
	case math.IsInf(f, -1):
		return AppendBulkString(dst, "-inf")
	}
	mark := len(dst)
	return bulkFromTail(strconv.AppendFloat(dst, f, 'f', -1, 64), mark)
}

// AppendCommand appends a command: an array of its arguments as bulk strings.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}

// bulkFromTail turns the text appended to dst after mark into a bulk
// string, inserting the length header in front of it. Formatting in place
// and then shifting keeps the encoders free of temporary buffers.
func bulkFromTail(dst []byte, mark int) []byte {
	n := len(dst) - mark
	var hdr [24]byte
	h := append(hdr[:0], '$')
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	dst = append(dst, h...) // grow by len(h); these bytes are overwritten
	copy(dst[mark+len(h):], dst[mark:mark+n])
	copy(dst[mark:], h)
	return append(dst, '\r', '\n')
}
