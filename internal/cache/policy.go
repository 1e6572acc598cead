package cache

import "hash/maphash"

// list is an intrusive doubly linked list of entries, oldest at head.
type list struct {
	head, tail *entry
	n          int
}

func (l *list) pushBack(e *entry) {
	e.linked = true
	e.prev, e.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.n++
}

func (l *list) unlink(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
	e.linked = false
	l.n--
}

// drop empties the list, unlinking every entry.
func (l *list) drop() {
	for e := l.head; e != nil; {
		next := e.next
		e.prev, e.next, e.linked = nil, nil, false
		e = next
	}
	*l = list{}
}

// admit links a new entry into the policy's queues.
func (sh *shard) admit(e *entry) {
	if sh.s.policy != S3FIFO {
		sh.main.pushBack(e)
		return
	}
	if sh.ghost.take(sh, e.key) {
		sh.main.pushBack(e)
		return
	}
	e.inSmall = true
	sh.small.pushBack(e)
	sh.smallBytes += e.size
}

func (sh *shard) unlinkPolicy(e *entry) {
	if e.inSmall {
		sh.small.unlink(e)
		sh.smallBytes -= e.size
		e.inSmall = false
		return
	}
	sh.main.unlink(e)
}

// victim picks the entry to evict, or nil when the shard is empty. It may
// reorder the queues (second chances, promotions) on the way.
func (sh *shard) victim() *entry {
	switch sh.s.policy {
	case LRU:
		return sh.main.head
	case CLOCK:
		for e := sh.main.head; e != nil; e = sh.main.head {
			if e.freq.Load() == 0 {
				return e
			}
			e.freq.Store(0)
			sh.main.unlink(e)
			sh.main.pushBack(e)
		}
		return nil
	}
	// S3FIFO: evict from the small queue while it holds more than a tenth
	// of the budget (or the main queue is empty), else from the main one.
	for {
		if sh.small.head != nil && (sh.smallBytes > sh.max/10 || sh.main.head == nil) {
			e := sh.small.head
			if e.freq.Load() > 0 {
				sh.small.unlink(e)
				sh.smallBytes -= e.size
				e.inSmall = false
				e.freq.Store(0)
				sh.main.pushBack(e)
				continue
			}
			sh.ghost.add(sh, e.key)
			return e
		}
		e := sh.main.head
		if e == nil {
			return nil
		}
		if f := e.freq.Load(); f > 0 {
			e.freq.Store(f - 1)
			sh.main.unlink(e)
			sh.main.pushBack(e)
			continue
		}
		return e
	}
}

// ghost remembers the hashes of keys recently evicted from the small FIFO,
// as many as the shard has entries, in a ring.
type ghost struct {
	ring []uint64
	next int
	n    int
	set  map[uint64]int32
}

func (g *ghost) reset() { *g = ghost{} }

func (g *ghost) add(sh *shard, key string) {
	h := maphash.String(sh.s.seed, key) | 1
	limit := int(sh.entries)
	if limit < 16 {
		limit = 16
	}
	if g.set == nil {
		g.set = make(map[uint64]int32)
	}
	if g.n < limit && g.n == len(g.ring) {
		g.ring = append(g.ring, 0)
		sh.used += ghostCost
	}
	if g.n == len(g.ring) {
		// Full: overwrite the oldest.
		old := g.ring[g.next]
		if c := g.set[old] - 1; c <= 0 {
			delete(g.set, old)
		} else {
			g.set[old] = c
		}
		g.n--
	}
	g.ring[g.next] = h
	g.next = (g.next + 1) % len(g.ring)
	g.n++
	g.set[h]++
}

// take reports whether key is remembered, and forgets it.
func (g *ghost) take(sh *shard, key string) bool {
	if len(g.set) == 0 {
		return false
	}
	h := maphash.String(sh.s.seed, key) | 1
	c, ok := g.set[h]
	if !ok {
		return false
	}
	if c <= 1 {
		delete(g.set, h)
	} else {
		g.set[h] = c - 1
	}
	return true
}
