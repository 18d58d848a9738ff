package pgstore_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if p := sharedPool.pool; p != nil {
		p.Close()
	}
	os.Exit(code)
}
