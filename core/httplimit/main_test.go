package httplimit_test

import (
	"testing"

	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestMain stops the Redis servers the login tests over Redis start.
func TestMain(m *testing.M) { redistest.Main(m) }
