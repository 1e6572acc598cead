package respire

// Reply readers for the generated decoders (zz_decoders.go).
//
// A reader has the shape
//
//	func(m resp.Msg, i int) (v T, next int, err error)
//
// It reads the element that starts at node i (attributes in front of it
// are skipped), returns its value and the index just past the element, so
// that readers compose: a list reader calls its element reader in a loop.
// Readers accept both protocol shapes of a reply: RESP3 maps and RESP2 flat
// arrays, RESP3 doubles and RESP2 strings holding numbers, RESP3 booleans
// and RESP2 integers, nested and flattened pairs. They copy every byte they
// keep, because m is only valid during the decoder call.
//
// A null where a value is required is an *UnexpectedReplyError; a nested
// error reply (inside an aggregate) is returned as an *Error.

import (
	"strconv"
	"unsafe"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Null is an element of a reply that may be null: a missing key in an MGET
// reply, a missing score in ZMSCORE. Valid is false for a null; V is then
// the zero value.
type Null[T any] struct {
	V     T
	Valid bool
}

// reader reads one element of a reply; see the file comment.
type reader[T any] func(m resp.Msg, i int) (T, int, error)

// node returns the index of the value at i, past its attributes, or an
// error when the reply ended early.
func node(m resp.Msg, i int) (int, error) {
	j := m.Value(i)
	if j >= len(m) {
		return j, errShortReply
	}
	return j, nil
}

var errShortReply = &UnexpectedReplyError{Got: "end of reply", Want: "a value"}

// want reports the node at j as unexpected; an error node becomes its
// *Error instead.
func want(m resp.Msg, j int, what string) error {
	n := &m[j]
	if n.IsError() {
		return newServerError("", n)
	}
	return errUnexpected("", n, what)
}

func isText(n *resp.Node) bool {
	switch n.Type {
	case resp.TypeBulkString, resp.TypeSimpleString, resp.TypeVerbatim:
		return !n.Null
	}
	return false
}

func readStr(m resp.Msg, i int) (string, int, error) {
	j, err := node(m, i)
	if err != nil {
		return "", j, err
	}
	n := &m[j]
	switch {
	case isText(n), n.Type == resp.TypeBigNumber, n.Type == resp.TypeDouble:
		if b, own := m.Take(j); own {
			// A large value read into a buffer of its own: kept, not
			// copied. Nothing writes to it again.
			return unsafe.String(unsafe.SliceData(b), len(b)), j + 1, nil
		}
		return string(n.Data), j + 1, nil
	case n.Type == resp.TypeInteger:
		return strconv.FormatInt(n.Int, 10), j + 1, nil
	}
	return "", m.Next(j), want(m, j, "a string")
}

func readInt(m resp.Msg, i int) (int64, int, error) {
	j, err := node(m, i)
	if err != nil {
		return 0, j, err
	}
	n := &m[j]
	switch {
	case n.Type == resp.TypeInteger:
		return n.Int, j + 1, nil
	case isText(n):
		v, perr := strconv.ParseInt(string(n.Data), 10, 64)
		if perr == nil {
			return v, j + 1, nil
		}
	}
	return 0, m.Next(j), want(m, j, "an integer")
}

func readFloat(m resp.Msg, i int) (float64, int, error) {
	j, err := node(m, i)
	if err != nil {
		return 0, j, err
	}
	n := &m[j]
	switch {
	case n.Type == resp.TypeDouble:
		return n.Float, j + 1, nil
	case n.Type == resp.TypeInteger:
		return float64(n.Int), j + 1, nil
	case isText(n):
		if v, perr := parseFloat(string(n.Data)); perr == nil {
			return v, j + 1, nil
		}
	}
	return 0, m.Next(j), want(m, j, "a number")
}

func readBool(m resp.Msg, i int) (bool, int, error) {
	j, err := node(m, i)
	if err != nil {
		return false, j, err
	}
	n := &m[j]
	switch {
	case n.Type == resp.TypeBoolean, n.Type == resp.TypeInteger:
		return n.Int != 0, j + 1, nil
	case isText(n) && (string(n.Data) == "1" || string(n.Data) == "0"):
		return string(n.Data) == "1", j + 1, nil
	}
	return false, m.Next(j), want(m, j, "a boolean")
}

// readReply keeps any element as a generic Reply.
func readReply(m resp.Msg, i int) (Reply, int, error) {
	next := m.Next(i)
	return Reply{m[i:next].Tree()}, next, nil
}

// isNull reports a null element at i.
func isNull(m resp.Msg, i int) (int, bool) {
	j := m.Value(i)
	return j, j < len(m) && (m[j].Null || m[j].Type == resp.TypeNull)
}

// readNull reads an element that may be null.
func readNull[T any](m resp.Msg, i int, read reader[T]) (Null[T], int, error) {
	if j, null := isNull(m, i); null {
		return Null[T]{}, j + 1, nil
	}
	v, next, err := read(m, i)
	return Null[T]{V: v, Valid: err == nil}, next, err
}

// readPtr reads a struct element that may be null (nil).
func readPtr[T any](m resp.Msg, i int, read reader[T]) (*T, int, error) {
	if j, null := isNull(m, i); null {
		return nil, j + 1, nil
	}
	v, next, err := read(m, i)
	if err != nil {
		return nil, next, err
	}
	return &v, next, nil
}

// aggregate returns the number of elements of the array, set or push at i
// (null gives -1) and the index of its first child.
func aggregate(m resp.Msg, i int) (n int, first int, err error) {
	j, err := node(m, i)
	if err != nil {
		return 0, j, err
	}
	nd := &m[j]
	if nd.Null || nd.Type == resp.TypeNull {
		return -1, j + 1, nil
	}
	switch nd.Type {
	case resp.TypeArray, resp.TypeSet, resp.TypePush:
		return int(nd.Int), j + 1, nil
	}
	return 0, m.Next(j), want(m, j, "an array")
}

// readList reads an array or set; a null gives a nil slice, an empty
// aggregate an empty non-nil one.
func readList[T any](m resp.Msg, i int, read reader[T]) ([]T, int, error) {
	n, j, err := aggregate(m, i)
	if err != nil || n < 0 {
		return nil, j, err
	}
	out := make([]T, n)
	for k := range out {
		if out[k], j, err = read(m, j); err != nil {
			return nil, j, err
		}
	}
	return out, j, nil
}

// pairs returns the number of key-value pairs of a map (RESP3) or of an
// array holding them, flat (k1 v1 k2 v2) or nested ([k1 v1] [k2 v2]), the
// index of the first pair and whether they are nested. A null gives -1.
func pairs(m resp.Msg, i int) (n int, first int, nested bool, err error) {
	j, err := node(m, i)
	if err != nil {
		return 0, j, false, err
	}
	nd := &m[j]
	switch {
	case nd.Null || nd.Type == resp.TypeNull:
		return -1, j + 1, false, nil
	case nd.Type == resp.TypeMap:
		return int(nd.Int / 2), j + 1, false, nil
	case nd.Type == resp.TypeArray || nd.Type == resp.TypeSet:
		if nd.Int == 0 {
			return 0, j + 1, false, nil
		}
		if c := m.Value(j + 1); c < len(m) && m[c].IsAggregate() {
			return int(nd.Int), j + 1, true, nil
		}
		if nd.Int%2 != 0 {
			return 0, m.Next(j), false, errUnexpected("", nd, "an array of key-value pairs")
		}
		return int(nd.Int / 2), j + 1, false, nil
	}
	return 0, m.Next(j), false, want(m, j, "a map")
}

// pairStart steps into a nested pair at j and returns the index of its key.
func pairStart(m resp.Msg, j int, nested bool) (int, error) {
	if !nested {
		return j, nil
	}
	n, k, err := aggregate(m, j)
	if err == nil && n != 2 {
		err = errUnexpected("", &m[m.Value(j)], "a key-value pair")
	}
	return k, err
}

// readMap reads a map, or an array of pairs.
func readMap[K comparable, V any](m resp.Msg, i int, rk reader[K], rv reader[V]) (map[K]V, int, error) {
	n, j, nested, err := pairs(m, i)
	if err != nil || n < 0 {
		return nil, j, err
	}
	out := make(map[K]V, n)
	for ; n > 0; n-- {
		var k K
		var v V
		if j, err = pairStart(m, j, nested); err != nil {
			return nil, j, err
		}
		if k, j, err = rk(m, j); err != nil {
			return nil, j, err
		}
		if v, j, err = rv(m, j); err != nil {
			return nil, j, err
		}
		out[k] = v
	}
	return out, j, nil
}

// tuple reads the positional fields of one tuple. Fields past the end of
// the tuple keep their zero value; elements past the last field are
// skipped by end.
type tuple struct {
	m   resp.Msg
	i   int // next node
	n   int // elements left in the tuple
	err error
}

// field reads the next field of t with read.
func field[T any](t *tuple, read reader[T]) (v T) {
	if t.err != nil || t.n <= 0 {
		return v
	}
	t.n--
	v, t.i, t.err = read(t.m, t.i)
	return v
}

func (t *tuple) str() string    { return field(t, readStr) }
func (t *tuple) int() int64     { return field(t, readInt) }
func (t *tuple) float() float64 { return field(t, readFloat) }

//lint:ignore U1000 generated decoders call it for a bool field of a tuple (gen/replytypes.go); no current reply has one
func (t *tuple) bool() bool { return field(t, readBool) }

// end skips what is left of the tuple and returns the index past it.
func (t *tuple) end() (int, error) {
	for ; t.n > 0 && t.err == nil; t.n-- {
		t.i = t.m.Next(t.i)
	}
	return t.i, t.err
}

// readTuple reads a tuple sent as an array.
func readTuple[T any](m resp.Msg, i int, fields func(*tuple) T) (T, int, error) {
	n, j, err := aggregate(m, i)
	if err != nil || n < 0 {
		var zero T
		if err == nil {
			err = errUnexpected("", &m[m.Value(i)], "an array")
		}
		return zero, j, err
	}
	t := tuple{m: m, i: j, n: n}
	v := fields(&t)
	next, err := t.end()
	return v, next, err
}

// readTupleList reads an array of tuples of width fields, either nested
// (RESP3: [[a b] [a b]]) or flattened into the array (RESP2: [a b a b]).
func readTupleList[T any](m resp.Msg, i int, width int, fields func(*tuple) T) ([]T, int, error) {
	var n, j int
	var err error
	if k, e := node(m, i); e == nil && width == 2 && m[k].Type == resp.TypeMap {
		// A RESP3 map of pairs (VSIM WITHSCORES: member => score) reads as
		// its pairs in the order the server sent them.
		n, j = int(m[k].Int), k+1
	} else {
		n, j, err = aggregate(m, i)
	}
	if err != nil || n < 0 {
		return nil, j, err
	}
	if n == 0 {
		return []T{}, j, nil
	}
	if c := m.Value(j); c < len(m) && m[c].IsAggregate() {
		out := make([]T, n)
		for k := range out {
			if out[k], j, err = readTuple(m, j, fields); err != nil {
				return nil, j, err
			}
		}
		return out, j, nil
	}
	if n%width != 0 {
		return nil, m.Next(i), errUnexpected("", &m[m.Value(i)], "an array of "+strconv.Itoa(width)+"-element tuples")
	}
	out := make([]T, n/width)
	for k := range out {
		t := tuple{m: m, i: j, n: width}
		out[k] = fields(&t)
		if j, err = t.end(); err != nil {
			return nil, j, err
		}
	}
	return out, j, nil
}

// record iterates over the fields of a record: a map (RESP3) or a flat
// array of names and values (RESP2).
type record struct {
	m      resp.Msg
	i      int // the key of the current pair, then its value
	n      int // pairs left
	nested bool
	err    error
}

// readRecord reads a record with fields, which switches on r.key() and
// reads the value with one of r's methods or recField, or calls r.skip.
func readRecord[T any](m resp.Msg, i int, fields func(r *record, v *T)) (T, int, error) {
	var v T
	n, j, nested, err := pairs(m, i)
	if err != nil || n < 0 {
		if err == nil {
			err = errUnexpected("", &m[m.Value(i)], "a map")
		}
		return v, j, err
	}
	r := record{m: m, i: j, n: n, nested: nested}
	for r.n > 0 && r.err == nil {
		r.n--
		if r.i, r.err = pairStart(m, r.i, nested); r.err != nil {
			break
		}
		fields(&r, &v)
	}
	return v, r.i, r.err
}

// key returns the name of the current field and moves to its value. The
// bytes are valid only during the decoder call: compare, do not keep.
func (r *record) key() []byte {
	j, err := node(r.m, r.i)
	if err != nil {
		r.err = err
		return nil
	}
	r.i = j + 1
	if n := &r.m[j]; isText(n) {
		return n.Data
	}
	r.err = want(r.m, j, "a field name")
	return nil
}

// skip skips the value of a field the record does not know.
func (r *record) skip() { r.i = r.m.Next(r.i) }

func recField[T any](r *record, read reader[T]) (v T) {
	if r.err != nil {
		return v
	}
	v, r.i, r.err = read(r.m, r.i)
	return v
}

func (r *record) str() string    { return recField(r, readStr) }
func (r *record) int() int64     { return recField(r, readInt) }
func (r *record) float() float64 { return recField(r, readFloat) }
func (r *record) bool() bool     { return recField(r, readBool) }

// Top-level decoders. A top-level null is Nil only where the notation says
// T?; elsewhere it is an unexpected reply.

func decodeWith[T any](read reader[T]) decoder {
	return func(m resp.Msg, r *result) error {
		v, _, err := read(m, 0)
		if err != nil {
			return err
		}
		r.Any = v
		return nil
	}
}

func decodeNullWith[T any](read reader[T]) decoder {
	return func(m resp.Msg, r *result) error {
		if _, null := isNull(m, 0); null {
			return Nil
		}
		v, _, err := read(m, 0)
		if err != nil {
			return err
		}
		r.Any = v
		return nil
	}
}

func decOK(m resp.Msg, r *result) error {
	j := m.Value(0)
	if j < len(m) && m[j].Type == resp.TypeSimpleString {
		return nil
	}
	if j < len(m) {
		return want(m, j, "OK")
	}
	return errShortReply
}

func decOKNull(m resp.Msg, r *result) error {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	return decOK(m, r)
}

// decOKOrNull reads a reply that is OK (done: true) or null (not done,
// as SET NX on an existing key: false).
func decOKOrNull(m resp.Msg, r *result) error {
	if _, null := isNull(m, 0); null {
		r.Bool = false
		return nil
	}
	r.Bool = true
	return decOK(m, r)
}

func decStr(m resp.Msg, r *result) (err error) {
	r.Str, _, err = readStr(m, 0)
	return err
}

func decStrNull(m resp.Msg, r *result) (err error) {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	r.Str, _, err = readStr(m, 0)
	return err
}

func decInt(m resp.Msg, r *result) (err error) {
	r.Int, _, err = readInt(m, 0)
	return err
}

func decIntNull(m resp.Msg, r *result) (err error) {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	r.Int, _, err = readInt(m, 0)
	return err
}

func decFloat(m resp.Msg, r *result) (err error) {
	r.Float, _, err = readFloat(m, 0)
	return err
}

func decFloatNull(m resp.Msg, r *result) (err error) {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	r.Float, _, err = readFloat(m, 0)
	return err
}

func decBool(m resp.Msg, r *result) (err error) {
	r.Bool, _, err = readBool(m, 0)
	return err
}

//lint:ignore U1000 the generator names it for a bool-or-null reply (gen/replytypes.go, "decBool"+suffix); no current command has one
func decBoolNull(m resp.Msg, r *result) (err error) {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	r.Bool, _, err = readBool(m, 0)
	return err
}

func decReply(m resp.Msg, r *result) error {
	r.Any = Reply{m.Tree()}
	return nil
}

func decReplyNull(m resp.Msg, r *result) error {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	return decReply(m, r)
}
