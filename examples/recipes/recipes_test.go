package recipes_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// A clock is a fake clock for the memory store: the examples move it by
// hand, so their output is the same on every run.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// storeAt returns a memory store that reads c; real code calls memstore.New().
func storeAt(c *clock) core.Store {
	s, err := memstore.New(memstore.WithClock(c.Now))
	if err != nil {
		panic(err)
	}
	return s
}

// downStore is a Redis that cannot answer: every take is unavailable.
type downStore struct{}

func (downStore) Take(context.Context, []core.Decision, []string, []core.Limit, int64) ([]core.Decision, error) {
	return nil, fmt.Errorf("dial tcp 10.0.0.7:6379: connect: connection refused: %w", core.ErrStoreUnavailable)
}

// serve sends r through h and prints the status and the named fields.
func serve(h http.Handler, r *http.Request, fields ...string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Print(w.Code)
	for _, f := range fields {
		if v := w.Header().Get(f); v != "" {
			fmt.Printf(" %s: %s", f, v)
		}
	}
	fmt.Println()
}

// ok is the application's handler.
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

// The fenced blocks of a Markdown file: Go code, and example output.
var (
	goBlock     = regexp.MustCompile("(?s)```go\n(.*?)```")
	outputBlock = regexp.MustCompile("(?s)```text\n(.*?)```")
)

// docs/recipes.md quotes this package: every Go block it shows must appear
// in one of the package's files (leading tabs aside: the document shows
// code from inside a function at the margin), and every output block, line
// after line, in an Example's "// Output:" comment, so the document cannot
// drift from code that compiles and runs.
func TestRecipesQuoteThisPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/recipes.md")
	require.NoError(t, err)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var source strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		source.Write(b)
	}
	code := dedent(source.String())

	blocks := goBlock.FindAllSubmatch(doc, -1)
	require.NotEmpty(t, blocks, "docs/recipes.md has Go blocks")
	for i, m := range blocks {
		first, _, _ := strings.Cut(strings.TrimSpace(string(m[1])), "\n")
		assert.Contains(t, code, dedent(string(m[1])), "Go block %d of docs/recipes.md (%s) is not in examples/recipes", i+1, first)
	}
	outputs := outputBlock.FindAllSubmatch(doc, -1)
	require.NotEmpty(t, outputs, "docs/recipes.md shows example output")
	for i, m := range outputs {
		lines := strings.Split(strings.TrimSpace(string(m[1])), "\n")
		comment := "// " + strings.Join(lines, "\n// ") + "\n"
		assert.Contains(t, code, comment, "output block %d of docs/recipes.md (%s) is in no Example's Output", i+1, lines[0])
	}
}

// dedent drops the leading tabs of every line of s.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}
