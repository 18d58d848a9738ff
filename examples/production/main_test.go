package main

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/examples/refapi"
	"github.com/ratelimitkit/ratelimit/examples/refapi/refapitest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The process around the API (the store the environment names, metrics,
// the drain, TRUSTED_PROXIES) with each framework's router.
func TestRunsAsAServer(t *testing.T) {
	for _, framework := range refapi.Frameworks() {
		t.Run(framework, func(t *testing.T) {
			router, err := refapi.RouterOf(framework)
			require.NoError(t, err)
			refapitest.RunServer(t, func(ctx context.Context, ln net.Listener, getenv func(string) string, logger *slog.Logger) error {
				return run(ctx, ln, router, getenv, logger)
			})
		})
	}
}
