// Package logtest captures what code under test logs through slog's
// default logger. For tests only.
package logtest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// CaptureDefault sends slog's default logger, as text from level up, to
// the returned buffer until t ends. The handler writes under its own lock;
// read the buffer once the logging goroutines are done.
func CaptureDefault(t testing.TB, level slog.Level) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// Lines returns the lines logged to buf, none for an empty buffer.
func Lines(buf *bytes.Buffer) []string {
	s := strings.TrimSpace(buf.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
