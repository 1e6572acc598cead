package transport

// fifo is a growable ring of pending requests. Not safe for concurrent use;
// conn guards it with its mutex. Its length is a power of two, so that a
// position wraps with a mask rather than a division (two per request, on
// every command's path).
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
	q.buf[(q.head+q.size)&(len(q.buf)-1)] = r
	q.size++
}

func (q *fifo) pop() *Request {
	if q.size == 0 {
		return nil
	}
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.size--
	return r
}

// at returns the request i places from the head (0 <= i < size).
func (q *fifo) at(i int) *Request {
	return q.buf[(q.head+i)&(len(q.buf)-1)]
}
