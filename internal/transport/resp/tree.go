package resp

// Value is a reply as an ordinary Go tree. Building one allocates; it is
// meant for generic replies (Do), tests and debugging, not for hot paths,
// which read a Msg directly.
type Value struct {
	// Type is the type byte of the value.
	Type Type
	// Null reports a null: RESP3 '_' or, with Type '$' or '*', a RESP2 null.
	Null bool
	// Str is the text of simple strings, bulk strings, verbatim strings
	// (without the format prefix), errors, big numbers (digits with sign) and
	// doubles (as received; AppendValue writes it back as is when set).
	Str string
	// Int is the value of an integer, and 0 or 1 for a boolean.
	Int int64
	// Float is the value of a double.
	Float float64
	// Format is the format of a verbatim string, e.g. "txt".
	Format string
	// Elems are the elements of an array, set or push; for a map or an
	// attribute, keys and values alternate.
	Elems []Value
	// Attrs are the attribute pairs (keys and values alternating) sent in
	// front of this value, nil if there were none. Several attributes in
	// front of one value are merged.
	Attrs []Value
}

// treeFrame is an aggregate under construction in Tree.
type treeFrame struct {
	v       Value
	rem     int64
	pending []Value // attribute pairs waiting for the next element
}

// Tree builds the tree of the element at index 0 of m. It uses an explicit
// stack, so deep replies cannot overflow the goroutine stack. An empty Msg
// gives the zero Value.
func (m Msg) Tree() Value {
	if len(m) == 0 {
		return Value{}
	}
	// stack[0] is a sentinel whose single element is the result.
	stack := []treeFrame{{rem: 1}}
	for i := 0; i < len(m) && stack[0].rem > 0; i++ {
		n := &m[i]
		top := &stack[len(stack)-1]
		if !n.IsAggregate() {
			v := scalarValue(n)
			v.Attrs, top.pending = top.pending, nil
			stack = addTreeElem(stack, v)
			continue
		}
		f := treeFrame{v: Value{Type: n.Type}, rem: n.Int}
		// Int is bounded by the nodes that follow in a well-formed Msg.
		f.v.Elems = make([]Value, 0, min(n.Int, int64(len(m)-i-1)))
		if n.Type != TypeAttribute {
			f.v.Attrs, top.pending = top.pending, nil
		}
		if n.Int > 0 {
			stack = append(stack, f)
		} else if n.Type == TypeAttribute {
			top.pending = appendAttrs(top.pending, nil)
		} else {
			stack = addTreeElem(stack, f.v)
		}
	}
	if len(stack[0].v.Elems) == 0 {
		return Value{}
	}
	return stack[0].v.Elems[0]
}

// addTreeElem adds a finished element to the innermost open aggregate and
// closes every aggregate that completes.
func addTreeElem(stack []treeFrame, v Value) []treeFrame {
	for {
		top := &stack[len(stack)-1]
		top.v.Elems = append(top.v.Elems, v)
		if top.rem--; top.rem > 0 || len(stack) == 1 {
			return stack
		}
		done := top.v
		stack = stack[:len(stack)-1]
		if done.Type == TypeAttribute {
			parent := &stack[len(stack)-1]
			parent.pending = appendAttrs(parent.pending, done.Elems)
			return stack
		}
		v = done
	}
}

// appendAttrs merges attribute pairs, keeping an empty attribute non-nil.
func appendAttrs(dst, pairs []Value) []Value {
	if dst == nil {
		dst = make([]Value, 0, len(pairs))
	}
	return append(dst, pairs...)
}

// scalarValue converts a node without children.
func scalarValue(n *Node) Value {
	v := Value{Type: n.Type, Null: n.Null}
	switch n.Type {
	case TypeInteger, TypeBoolean:
		v.Int = n.Int
	case TypeDouble:
		v.Float = n.Float
		v.Str = string(n.Data)
	case TypeVerbatim:
		v.Format = string(n.Format[:])
		v.Str = string(n.Data)
	default:
		v.Str = string(n.Data)
	}
	return v
}
