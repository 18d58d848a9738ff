package core

import (
	"sync"
	"unsafe"
)

// A scratch holds the buffers of one store call of a [Limiter]: the
// decisions the store appends (the Result copies them) and, for a
// [NonBlocking] store, the keys, built in one reused byte buffer. Both are
// valid only until the scratch goes back to its pool: a store keeps
// neither dst nor, by NonBlocking's contract, a key it has not copied.
// With them a decision over the memory store allocates nothing.
type scratch struct {
	ds   []Decision
	keys []string
	buf  []byte
}

// scratches pools scratch values; they hold no state between calls.
var scratches = sync.Pool{New: func() any { return new(scratch) }}

// build returns the keys of the client id (already safe) under plan p.
func (sc *scratch) build(p *plan, head, id string) []string {
	n := 0
	for _, s := range p.suffixes {
		n += len(head) + len(id) + len(s)
	}
	if cap(sc.buf) < n {
		sc.buf = make([]byte, 0, n)
	}
	buf, keys := sc.buf[:0], sc.keys[:0]
	for _, s := range p.suffixes {
		start := len(buf)
		buf = append(append(append(buf, head...), id...), s...)
		keys = append(keys, unsafe.String(&buf[start], len(buf)-start))
	}
	sc.buf, sc.keys = buf, keys
	return keys
}
