package transport

// ring is a growable FIFO. Not safe for concurrent use.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (q *ring[T]) len() int { return q.size }

func (q *ring[T]) push(v T) {
	if q.size == len(q.buf) {
		n := 2 * len(q.buf)
		if n == 0 {
			n = 8
		}
		nb := make([]T, n)
		k := copy(nb, q.buf[q.head:])
		copy(nb[k:], q.buf[:q.head])
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = v
	q.size++
}

func (q *ring[T]) pop() (T, bool) {
	var zero T
	if q.size == 0 {
		return zero, false
	}
	v := q.buf[q.head]
	q.buf[q.head] = zero
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	if q.size == 0 && len(q.buf) > 1024 {
		// A burst grew the ring; let the memory go once it drained.
		q.buf, q.head = nil, 0
	}
	return v, true
}

// peek returns the oldest element without removing it.
func (q *ring[T]) peek() (T, bool) {
	if q.size == 0 {
		var zero T
		return zero, false
	}
	return q.buf[q.head], true
}

// last returns a pointer to the newest element, or nil.
func (q *ring[T]) last() *T {
	if q.size == 0 {
		return nil
	}
	return &q.buf[(q.head+q.size-1)%len(q.buf)]
}
