package main

import (
	"testing"

	"github.com/ratelimitkit/ratelimit/examples/refapi/refapitest"
)

func TestServesTheReferenceAPI(t *testing.T) {
	refapitest.Run(t, newRouter)
}
