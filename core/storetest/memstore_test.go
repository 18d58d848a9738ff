package storetest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

func newMemStore(t *testing.T, now func() time.Time) core.Store {
	s, err := memstore.New(memstore.WithClock(now))
	require.NoError(t, err)
	return s
}

func TestMemStore(t *testing.T) {
	storetest.Run(t, newMemStore)
}

func TestMemStoreConcurrency(t *testing.T) {
	storetest.RunConcurrency(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
		return slices.Repeat([]core.Store{newMemStore(t, now)}, n)
	})
}
