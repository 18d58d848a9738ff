package refapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// DemoAccount and DemoPassword are the one login that succeeds.
const (
	DemoAccount  = "alice"
	DemoPassword = "correct-horse-battery-staple"
)

// Hello serves GET /api/hello.
func Hello(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"message": "hello"})
}

// Login serves POST /login with a JSON body {"account": ..., "password":
// ...}, which the login limiter's keyfunc.FormValue("account") read first
// and put back. A body that is not JSON is a 400.
func Login(w http.ResponseWriter, r *http.Request) {
	var in struct{ Account, Password string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want a JSON body {"account": ..., "password": ...}`})
		return
	}
	if in.Account == DemoAccount && in.Password == DemoPassword {
		writeJSON(w, http.StatusOK, map[string]string{"message": "welcome"})
		return
	}
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "wrong account or password"})
}

// Webhook serves POST /webhooks/{source}. The source is r.PathValue,
// which ServeMux and chi set and the gin and echo adapters fill in.
func Webhook(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusAccepted, map[string]string{"received_from": r.PathValue("source")})
}

// ExportTime is how long [BuildExport] works.
const ExportTime = 300 * time.Millisecond

// BuildExport is the work of an export: it stands in for building a
// report, taking [ExportTime], and returns ctx's error early when the
// client gives up.
func BuildExport(ctx context.Context) error {
	t := time.NewTimer(ExportTime)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Export returns the handler of GET /api/export, which runs build
// ([BuildExport] in the demo; tests pass work they hold) and answers
// {"status":"exported"}, or 503 when build fails.
func Export(build func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := build(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "export not finished"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "exported"})
	}
}

// Healthz serves GET /healthz, which is never limited.
func Healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
