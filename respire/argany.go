package respire

import (
	"reflect"
	"time"
)

// argAny sends one value of a type Do takes: strings and byte slices as
// they are, integers and floats in decimal, bools as 1 or 0, a
// time.Duration in milliseconds. Any other type fails the command before
// anything is sent, naming the command and the argument.
func (x *cmd) argAny(command, argument string, a any) {
	switch v := a.(type) {
	case string:
		x.arg(v)
	case []byte:
		x.argBytes(v)
	case int:
		x.argInt(int64(v))
	case int32:
		x.argInt(int64(v))
	case int64:
		x.argInt(v)
	case uint:
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
		x.argInt(v.Milliseconds())
	default:
		// Named through reflect, not fmt, so that a does not escape and
		// the caller's boxing of its arguments stays on its stack.
		name := "<nil>"
		if t := reflect.TypeOf(a); t != nil {
			name = t.String()
		}
		x.fail(newArgError(command, argument, "unsupported type "+name))
	}
}
