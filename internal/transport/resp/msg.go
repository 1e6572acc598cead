package resp

// IsError reports whether n is a simple error or a bulk error.
func (n *Node) IsError() bool {
	return n.Type == TypeSimpleError || n.Type == TypeBulkError
}

// IsAggregate reports whether n has children: a non-null array, map, set,
// attribute or push.
func (n *Node) IsAggregate() bool {
	return !n.Null && n.Type.IsAggregate()
}

// Next returns the index just past the element starting at i: past any
// attributes in front of it and past its whole subtree.
func (m Msg) Next(i int) int {
	if i < 0 {
		return len(m)
	}
	// pending counts elements still to skip. An attribute adds its children
	// but does not consume the element it stands in front of.
	for pending := int64(1); pending > 0 && i < len(m); i++ {
		n := &m[i]
		switch {
		case n.Null || !n.Type.IsAggregate():
			pending--
		case n.Type == TypeAttribute:
			pending += n.Int
		default:
			pending += n.Int - 1
		}
	}
	return i
}

// Value returns the index of the value of the element starting at i,
// skipping any attribute nodes (and their children) in front of it.
func (m Msg) Value(i int) int {
	for i >= 0 && i < len(m) && m[i].Type == TypeAttribute && !m[i].Null {
		n := int(m[i].Int)
		i++
		for k := 0; k < n && i < len(m); k++ {
			i = m.Next(i)
		}
	}
	return i
}

// Attrs returns the range m[start:end] of the attribute nodes in front of
// the element at i (all of them, if several attributes precede it), and
// ok == false when there are none. Each attribute node in the range is
// followed by its children, alternating key and value.
func (m Msg) Attrs(i int) (start, end int, ok bool) {
	v := m.Value(i)
	if v == i {
		return 0, 0, false
	}
	return i, v, true
}

// Child returns the index of the k-th child element (from 0) of the
// aggregate element at i, or -1 if that element is not an aggregate or has
// no k-th child. The returned element may start with attributes; use Value
// on it. Child costs O(size of the preceding children); to visit all
// children use the loop shown in the package documentation.
func (m Msg) Child(i, k int) int {
	v := m.Value(i)
	if v < 0 || v >= len(m) || !m[v].IsAggregate() || k < 0 || int64(k) >= m[v].Int {
		return -1
	}
	j := v + 1
	for ; k > 0 && j < len(m); k-- {
		j = m.Next(j)
	}
	if j >= len(m) {
		return -1
	}
	return j
}

// Top returns the node of the top-level value, past any attributes in
// front of it, or nil for an empty Msg. It is how a caller tells a push
// frame (Type == TypePush) from a reply.
func (m Msg) Top() *Node {
	v := m.Value(0)
	if v >= len(m) {
		return nil
	}
	return &m[v]
}
