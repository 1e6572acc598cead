package respire

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// Map forms of the commands that take field-value pairs. Values are
// converted as Do converts its arguments: strings and byte slices as they
// are, integers (every size) and floats in decimal, bools as 1 or 0, a
// time.Duration in whole milliseconds, an encoding.BinaryMarshaler (not
// time.Time) as what it marshals to; a value of any other type, nil or a
// time.Time fails the command with an *ArgError before anything is sent. The pairs are sent in the order of
// their field names, so that the same map always makes the same command.

// HSetMap is HSet with the fields and values of a map: it sets each field
// of the hash at key to its value, and returns how many fields were added
// (fields that existed are updated but not counted). An empty map is an
// *ArgError, as HSET needs one pair at least.
//
//	n, err := client.HSetMap(ctx, "user:1", map[string]any{"name": "Ada", "visits": 3})
func (c *Client) HSetMap(ctx context.Context, key string, fields map[string]any) (int64, error) {
	x := c.newCmd(&cmdHSET)
	argsHSet(x, key, mapFields(x, fields))
	return execInt(ctx, c, x, decInt)
}

// HSetMap queues HSET with the fields and values of a map; see
// Client.HSetMap.
func (b *Batch) HSetMap(key string, fields map[string]any) *Future[int64] {
	x := b.newCmd(&cmdHSET)
	argsHSet(x, key, mapFields(x, fields))
	return queue(b, x, decInt, pickInt)
}

// XAddMap is XAdd with the fields and values of a map: it appends an entry
// to the stream at key and returns its ID (an empty id sends *, the server
// picks the ID). A map has no order, so the entry's fields are stored in
// the order of their names, which is the order XRANGE and XREAD return
// them in; use XAdd with FieldValue pairs to choose the order. An empty
// map is an *ArgError, as an entry needs one field at least.
//
//	id, err := client.XAddMap(ctx, "events", "", map[string]any{"kind": "click", "x": 12}, nil)
func (c *Client) XAddMap(ctx context.Context, key string, id string, fields map[string]any, opts *XAddOptions) (string, error) {
	x := c.newCmd(&cmdXADD)
	argsXAdd(x, key, id, mapFields(x, fields), opts)
	return execStr(ctx, c, x, decStr)
}

// XAddMap queues XADD with the fields and values of a map; see
// Client.XAddMap.
func (b *Batch) XAddMap(key string, id string, fields map[string]any, opts *XAddOptions) *Future[string] {
	x := b.newCmd(&cmdXADD)
	argsXAdd(x, key, id, mapFields(x, fields), opts)
	return queue(b, x, decStr, pickStr)
}

// mapFields turns fields into pairs sorted by field name, each value as
// anyText gives it; a value of another type fails x.
func mapFields(x *cmd, fields map[string]any) []FieldValue {
	data := make([]FieldValue, 0, len(fields))
	for f, v := range fields {
		s, ok := anyText(v)
		if !ok {
			x.fail(unsupportedArg(x.info.name, "value of field "+strconv.Quote(f), v))
		}
		data = append(data, FieldValue{Field: f, Value: s})
	}
	slices.SortFunc(data, func(a, b FieldValue) int { return strings.Compare(a.Field, b.Field) })
	return data
}
