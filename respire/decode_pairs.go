package respire

import "github.com/respire-go/respire/internal/transport/resp"

// readPairList reads a list of two-field tuples sent as a map (RESP3:
// XREAD's stream => entries) or as an array of tuples (RESP2: [[stream,
// entries], ...]; a tuple may have more elements, as XREADGROUP CLAIM's
// entries do), in the order the server sent them, which a Go map would
// lose. A null gives a nil slice.
func readPairList[T any](m resp.Msg, i int, fields func(*tuple) T) ([]T, int, error) {
	j, err := node(m, i)
	if err != nil || m[j].Type != resp.TypeMap {
		return readList(m, i, func(m resp.Msg, i int) (T, int, error) { return readTuple(m, i, fields) })
	}
	out := make([]T, m[j].Int/2)
	j++
	for k := range out {
		t := tuple{m: m, i: j, n: 2}
		out[k] = fields(&t)
		if j, err = t.end(); err != nil {
			return nil, j, err
		}
	}
	return out, j, nil
}

// The kinds of reply that tell the optional fields of a tuple apart (see
// readLooseTuple).
const (
	kindText = iota // a string or a number sent as one, or a RESP3 double
	kindInt
	kindAggregate
)

// kind is the kind of t's next element.
func (t *tuple) kind() int {
	j, err := node(t.m, t.i)
	switch {
	case err != nil:
		return kindText // the read that follows reports it
	case t.m[j].Type == resp.TypeInteger:
		return kindInt
	case t.m[j].IsAggregate():
		return kindAggregate
	}
	return kindText
}

// readLooseTuple reads a tuple whose fields past the first are sent only
// when asked for (GEOSEARCH's WITHDIST, WITHHASH, WITHCOORD): an array of
// the first field and those asked for, or the first field alone when
// none was.
func readLooseTuple[T any](m resp.Msg, i int, fields func(*tuple) T) (T, int, error) {
	j, err := node(m, i)
	if err == nil && !m[j].IsAggregate() {
		t := tuple{m: m, i: i, n: 1}
		v := fields(&t)
		next, err := t.end()
		return v, next, err
	}
	return readTuple(m, i, fields)
}
