package goredis

import (
	"encoding"
	"fmt"
	"net"
	"strconv"
	"time"
)

// convertArgs turns the arguments go-redis built for a command into the
// words Respire sends, encoded as go-redis would have written them on the
// wire. The difference that matters is time.Duration: go-redis writes its
// nanoseconds, Respire's Do its milliseconds.
// Arguments Respire sends as they are (the common case: strings and
// integers) are not copied: in itself is returned, and only read.
func convertArgs(in []any) ([]any, error) {
	if asIs(in) {
		return in, nil
	}
	out := make([]any, len(in))
	for i, v := range in {
		w, err := convertArg(v)
		if err != nil {
			return nil, fmt.Errorf("goredis: argument %d of %v: %w", i, in[0], err)
		}
		out[i] = w
	}
	return out, nil
}

// asIs reports whether every argument is one convertArg returns unchanged.
func asIs(in []any) bool {
	for _, v := range in {
		switch v.(type) {
		case string, []byte, int64:
		default:
			return false
		}
	}
	return true
}

func convertArg(v any) (any, error) {
	switch v := v.(type) {
	case string, []byte:
		return v, nil
	case nil:
		return "", nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case int64:
		return v, nil
	case uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case time.Duration:
		return strconv.FormatInt(v.Nanoseconds(), 10), nil
	case time.Time: // before BinaryMarshaler, which time.Time also is
		return v.Format(time.RFC3339Nano), nil
	case net.IP:
		return []byte(v), nil
	case encoding.BinaryMarshaler:
		b, err := v.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("MarshalBinary of %T: %w", v, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: cannot encode a %T (implement encoding.BinaryMarshaler)", ErrNotSupported, v)
}
