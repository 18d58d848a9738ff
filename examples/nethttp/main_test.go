package main

import (
	"testing"

	"github.com/ratelimitkit/ratelimit/examples/internal/quickstarttest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestQuickStart(t *testing.T) {
	quickstarttest.Run(t, newStore, newHandler)
}
