package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A limit with a Lockout over a store that counts none would lock no one
// out: the limiter refuses it, whether it comes from the code, from new
// tiers or over the fallback store.
func TestLockoutNeedsAStoreThatCountsThem(t *testing.T) {
	guarded := core.PerMinute(5).WithName("login").
		WithLockout(core.Lockout{After: 3, Within: time.Minute, For: time.Minute})
	plain := struct{ core.Store }{memstoreFor(t)} // Take only: no Lockouts capability

	_, err := core.NewLimiter(plain, core.WithLimits(guarded))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `limit "login" has a Lockout, but the store`)
	assert.Contains(t, err.Error(), "does not count lockouts")

	_, err = core.NewLimiter(memstoreFor(t), core.WithLimits(guarded), core.WithFailureMode(core.FailLocal), core.WithFallback(plain, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the fallback store")

	l, err := core.NewLimiter(plain, core.WithLimits(core.PerMinute(5).WithName("login")))
	require.NoError(t, err, "without a Lockout the store is fine")
	err = l.SetTiers([]core.Tier{{Name: "default", Limits: []core.Limit{guarded}}}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not count lockouts")

	_, err = core.NewLimiter(memstoreFor(t), core.WithLimits(guarded))
	assert.NoError(t, err, "memstore counts lockouts")
}
