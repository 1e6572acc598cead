package resp

import (
	"math"
	"strconv"
	"unsafe"
)

// parseUint parses a non-empty run of decimal digits that fits in an int64.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseInt parses an optionally signed decimal integer that fits in an int64.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		return int64(-n), true //nolint:gosec // -n wraps to MinInt64 for 1<<63, as intended
	}
	return int64(n), true
}

// validBigNumber reports whether b is an optionally signed run of digits.
func validBigNumber(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	return digits(b) == len(b) && len(b) > 0
}

// digits returns the length of the run of decimal digits at the start of b.
func digits(b []byte) int {
	for i, c := range b {
		if c < '0' || c > '9' {
			return i
		}
	}
	return len(b)
}

// parseDouble parses a RESP3 double: inf, -inf, +inf, nan, or
// [+-]digits[.digits][(e|E)[+-]digits]. Anything else (hex floats, "1.",
// ".5", "Infinity", spaces) is rejected.
func parseDouble(b []byte) (float64, bool) {
	switch string(b) { // no allocation: the compiler compares in place
	case "inf", "+inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	case "nan":
		return math.NaN(), true
	}
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	n := digits(b[i:])
	if n == 0 {
		return 0, false
	}
	i += n
	if i < len(b) && b[i] == '.' {
		i++
		n = digits(b[i:])
		if n == 0 {
			return 0, false
		}
		i += n
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		n = digits(b[i:])
		if n == 0 {
			return 0, false
		}
		i += n
	}
	if i != len(b) {
		return 0, false
	}
	// The text is validated, so ParseFloat can only report a range error,
	// for which it still returns the nearest value (±Inf or 0); accept it.
	// unsafe.String avoids copying: the string does not outlive this call
	// except inside the discarded error.
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	return f, true
}
