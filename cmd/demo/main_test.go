package main

import (
	"net/http"
	"testing"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
	"github.com/ratelimitkit/ratelimit/examples/refapi/refapitest"
)

// The demo drives examples/refapi; the examples carry their own copies of
// it. The same scenarios keep them one API.
func TestServesTheReferenceAPI(t *testing.T) {
	refapitest.Run(t, func(store core.Store) (http.Handler, error) {
		p, err := refapi.New(store, refapi.Config{})
		if err != nil {
			return nil, err
		}
		return newRouter(p), nil
	})
}
