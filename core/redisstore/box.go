package redisstore

import "sync/atomic"

// boxBits sets the size of a [boxes] table: 1<<boxBits slots.
const boxBits = 8

// boxes holds the ARGV integers of limits (rate, period, capacity) boxed
// for the command: boxing an int64 as an any allocates unless it is below
// 256, and a limit sends the same ones on every take. A value's slot is
// picked by its hash, so the table stays bounded whatever limits the store
// sees; a value not in its slot (new, or displaced by another) is boxed
// afresh and takes the slot. It is safe for concurrent use; the zero value
// is empty.
type boxes struct {
	slots [1 << boxBits]atomic.Value // each holds an int64
}

// box returns v as an any, boxed once for as long as it keeps its slot.
func (b *boxes) box(v int64) any {
	if 0 <= v && v < 256 {
		return v // Go boxes these without allocating
	}
	slot := &b.slots[uint64(v)*0x9e3779b97f4a7c15>>(64-boxBits)] // Fibonacci hashing
	if a := slot.Load(); a != nil {
		if n, _ := a.(int64); n == v {
			return a
		}
	}
	a := any(v)
	slot.Store(a)
	return a
}
