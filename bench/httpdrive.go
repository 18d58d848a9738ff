package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
)

// An httpDriver serves requests to a handler in-process, as httptest does,
// but reuses one request and one response writer per worker: a fresh
// httptest.ResponseRecorder per check would add the recorder's own
// allocations to every middleware measured.
type httpDriver struct {
	base *http.Request
	w    discardWriter
}

func newHTTPDriver() *httpDriver {
	return &httpDriver{base: httptest.NewRequest(http.MethodGet, "/api/hello", nil), w: discardWriter{h: http.Header{}}}
}

// serve sends one request from remoteAddr through h and reports whether
// the handler behind the limiter was reached (no 429 or 503 written).
func (d *httpDriver) serve(h http.Handler, remoteAddr string) (bool, error) {
	r := *d.base // a shallow copy: the middleware may derive requests from it
	r.RemoteAddr = remoteAddr
	d.w.reset()
	h.ServeHTTP(&d.w, &r)
	if d.w.err != nil {
		return false, d.w.err
	}
	return d.w.code == 0 || d.w.code == http.StatusOK, nil
}

// discardWriter keeps the status code and the headers, drops the body.
type discardWriter struct {
	h    http.Header
	code int
	err  error // set by an error handler (httprate's)
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(p), nil
}

func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *discardWriter) reset() {
	clear(w.h)
	w.code, w.err = 0, nil
}

// clientAddrs returns n distinct client addresses in 10.0.0.0/8.
func clientAddrs(n int) []string {
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("10.%d.%d.%d:40000", i>>16&255, i>>8&255, i&255)
	}
	return addrs
}
