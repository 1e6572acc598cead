package respire

import (
	"encoding"
	"math"
	"reflect"
	"strconv"
	"time"
)

// argAny sends one value of a type Do takes: strings and byte slices as
// they are, integers (of every size) and floats in decimal, bools as 1 or
// 0, a time.Duration in milliseconds, rounded up. Any other type (nil, a
// time.Time, an encoding.BinaryMarshaler, a struct, a pointer, a slice
// other than []byte) fails the command before anything is sent, naming
// the command, the argument and what to send instead. (Marshalling a
// value here would make every argument escape: Do's boxing of its
// arguments would allocate.)
func (x *cmd) argAny(command, argument string, a any) {
	switch v := a.(type) {
	case string:
		x.arg(v)
	case []byte:
		x.argBytes(v)
	case int:
		x.argInt(int64(v))
	case int8:
		x.argInt(int64(v))
	case int16:
		x.argInt(int64(v))
	case int32:
		x.argInt(int64(v))
	case int64:
		x.argInt(v)
	case uint:
		x.argUint(uint64(v))
	case uint8:
		x.argUint(uint64(v))
	case uint16:
		x.argUint(uint64(v))
	case uint32:
		x.argUint(uint64(v))
	case uint64:
		x.argUint(v)
	case float64:
		x.argFloat(v)
	case float32:
		x.argFloat(float64(v))
	case bool:
		if v {
			x.arg("1")
		} else {
			x.arg("0")
		}
	case time.Duration:
		x.argInt(inUnits(v, time.Millisecond))
	default:
		x.fail(unsupportedArg(command, argument, a))
	}
}

// unsupportedArg is the *ArgError for a value of a type argAny does not
// take, saying what to send instead where it can. The type is named
// through reflect, not fmt, so that a does not escape and the caller's
// boxing of its arguments stays on its stack.
func unsupportedArg(command, argument string, a any) error {
	switch a.(type) {
	case nil:
		return newArgError(command, argument, "nil is not a value: send \"\" for an empty string")
	case time.Time:
		return newArgError(command, argument, "unsupported type time.Time: send t.Unix() or t.UnixMilli() for a timestamp, or t.Format(time.RFC3339Nano) for text")
	case encoding.BinaryMarshaler:
		return newArgError(command, argument, "unsupported type "+reflect.TypeOf(a).String()+": send the []byte its MarshalBinary returns")
	}
	return newArgError(command, argument, "unsupported type "+reflect.TypeOf(a).String()+
		" (strings, []byte, integers, floats, bool and time.Duration are)")
}

// anyText is the text argAny sends for a, for values that travel as
// strings (the values of HSetMap and XAddMap); false for a type argAny
// refuses. TestAnyTextMatchesArgAny keeps the two in step.
func anyText(a any) (string, bool) {
	switch v := a.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	case int:
		return strconv.FormatInt(int64(v), 10), true
	case int8:
		return strconv.FormatInt(int64(v), 10), true
	case int16:
		return strconv.FormatInt(int64(v), 10), true
	case int32:
		return strconv.FormatInt(int64(v), 10), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint:
		return strconv.FormatUint(uint64(v), 10), true
	case uint8:
		return strconv.FormatUint(uint64(v), 10), true
	case uint16:
		return strconv.FormatUint(uint64(v), 10), true
	case uint32:
		return strconv.FormatUint(uint64(v), 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float64:
		return formatFloatArg(v), true
	case float32:
		return formatFloatArg(float64(v)), true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	case time.Duration:
		return strconv.FormatInt(inUnits(v, time.Millisecond), 10), true
	}
	return "", false
}

// formatFloatArg is resp.AppendBulkFloat's text: shortest decimal form
// without exponent, infinities as inf and -inf.
func formatFloatArg(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
