package refapi_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
	"github.com/ratelimitkit/ratelimit/examples/refapi/refapitest"
)

// One policy, four real routers: each serves the same API.
func TestServesTheReferenceAPI(t *testing.T) {
	for _, framework := range refapi.Frameworks() {
		t.Run(framework, func(t *testing.T) {
			router, err := refapi.RouterOf(framework)
			require.NoError(t, err)
			refapitest.Run(t, func(store core.Store, export refapitest.ExportFunc) (http.Handler, error) {
				p, err := refapi.New(store, refapi.Config{Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					return nil, err
				}
				return router(p, export), nil
			})
		})
	}
}

func TestRouterOfAnUnknownFramework(t *testing.T) {
	_, err := refapi.RouterOf("fiber")
	require.Error(t, err)
	require.ErrorContains(t, err, `"fiber"`)
	require.ErrorContains(t, err, "gin, echo, chi, nethttp")
}
