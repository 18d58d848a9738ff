package redisstore

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every value comes back as itself, also after other values took its slot.
func TestBoxesKeepValues(t *testing.T) {
	var b boxes
	r := rand.New(rand.NewPCG(1, 2))
	values := []int64{0, 1, 255, 256, 1_000_000, 60_000_000, 1 << 40}
	for range 2000 { // many more than slots: most share one
		values = append(values, r.Int64N(1<<41))
	}
	for range 2 {
		for _, v := range values {
			assert.Equal(t, any(v), b.box(v))
		}
	}
}
