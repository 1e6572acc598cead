package transport

// fifo is a growable ring of pending requests. Not safe for concurrent use;
// conn guards it with its mutex.
type fifo struct {
	buf        []*Request
	head, size int
}

func (q *fifo) push(r *Request) {
	if q.size == len(q.buf) {
		n := 2 * len(q.buf)
		if n == 0 {
			n = 64
		}
		nb := make([]*Request, n)
		k := copy(nb, q.buf[q.head:])
		copy(nb[k:], q.buf[:q.head])
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = r
	q.size++
}

func (q *fifo) pop() *Request {
	if q.size == 0 {
		return nil
	}
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return r
}
