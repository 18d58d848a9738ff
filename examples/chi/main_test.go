package main

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/examples/refapi/refapitest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestServesTheReferenceAPI(t *testing.T) {
	refapitest.Run(t, func(store core.Store, export refapitest.ExportFunc) (http.Handler, error) {
		return newHandler(store, nil, slog.New(slog.DiscardHandler), export)
	})
}

func TestRunsAsAServer(t *testing.T) {
	refapitest.RunServer(t, run)
}
