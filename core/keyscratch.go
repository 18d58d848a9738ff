package core

import (
	"sync"
	"unsafe"
)

// keyScratch holds the keys of one call to a [NonBlocking] store, built in
// one reused byte buffer, so a decision over the memory store allocates no
// key. The keys are valid only until the scratch goes back to its pool:
// NonBlocking's contract has such a store copy any key it keeps.
type keyScratch struct {
	keys []string
	buf  []byte
}

// keyScratches pools keyScratch values; they hold no state between calls.
var keyScratches = sync.Pool{New: func() any { return new(keyScratch) }}

// build returns the keys of the client id (already safe) under plan p.
func (sc *keyScratch) build(p *plan, head, id string) []string {
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
