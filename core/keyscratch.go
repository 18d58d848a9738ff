package core

import (
	"sync"
	"unsafe"
)

// A scratch holds the buffers of one store call of a [Limiter]: the
// decisions the store appends (the Result copies them) and, for a
// NonBlocking store ([Capabilities]), the keys, built in one reused byte
// buffer. Both are valid only until the scratch goes back to its pool: a
// store keeps neither dst nor, by NonBlocking's contract, a key it has not
// copied.
// With them a decision over the memory store allocates nothing.
type scratch struct {
	ds   []Decision
	keys []string
	buf  []byte
}

// scratches pools scratch values; they hold no state between calls.
var scratches = sync.Pool{New: func() any { return new(scratch) }}

// build returns the keys of the client id (already safe) under plan p.
// The keys are written side by side into sc.buf, sized first, with copy:
// the appends this replaces checked the capacity three times a key.
func (sc *scratch) build(p *plan, head, id string) []string {
	n := len(p.suffixes)*(len(head)+len(id)) + p.suffixBytes
	if cap(sc.buf) < n {
		sc.buf = make([]byte, n)
	}
	buf, keys := sc.buf[:n], sc.keys[:0]
	for _, s := range p.suffixes {
		k := copy(buf, head)
		k += copy(buf[k:], id)
		k += copy(buf[k:], s)
		keys = append(keys, unsafe.String(&buf[0], k))
		buf = buf[k:]
	}
	sc.keys = keys
	return keys
}
