package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

func Example() {
	// A fixed clock keeps the output stable; leave WithClock out in real use.
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	keys, err := core.NewKeyBuilder("rl")
	if err != nil {
		panic(err)
	}
	limit := core.PerSecond(2)
	key := keys.Key("alice", limit)

	for range 3 {
		ds, err := store.Take(context.Background(), nil, []string{key}, []core.Limit{limit}, 1)
		if err != nil {
			panic(err)
		}
		d := ds[0]
		fmt.Printf("allowed=%t remaining=%d reset=%s retry=%s\n", d.Allowed, d.Remaining, d.ResetAfter, d.RetryAfter)
	}
	fmt.Println("key:", key)
	// Output:
	// allowed=true remaining=1 reset=500ms retry=0s
	// allowed=true remaining=0 reset=1s retry=0s
	// allowed=false remaining=0 reset=1s retry=500ms
	// key: rl:{alice}:2-per-1s:g
}
