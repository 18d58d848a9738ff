package core_test

import (
	"testing"

	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestMain stops the Redis servers the deny-cache flood test starts.
func TestMain(m *testing.M) { redistest.Main(m) }
