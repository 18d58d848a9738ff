package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ratelimitkit/ratelimit/core"
)

// UniqueKeyBuilder returns a [core.KeyBuilder] whose prefix, "st" and 16
// random hex digits, no other test uses: tests that share a server (one
// Redis for a whole test binary) then never see each other's state, in
// any order (go test -shuffle=on) and in parallel.
func UniqueKeyBuilder(t testing.TB) core.KeyBuilder {
	t.Helper()
	kb, err := core.NewKeyBuilder(uniquePrefix())
	if err != nil {
		t.Fatalf("storetest: key builder: %v", err)
	}
	return kb
}

// uniquePrefix returns the key prefix of a [UniqueKeyBuilder], for a
// [core.Limiter] ([core.WithPrefix]).
func uniquePrefix() string { return fmt.Sprintf("st%016x", rand.Uint64()) }
