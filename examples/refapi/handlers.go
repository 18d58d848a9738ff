package refapi

import (
	"encoding/json"
	"net/http"
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

// Login serves POST /login with form fields account and password.
func Login(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("account") == DemoAccount && r.FormValue("password") == DemoPassword {
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

// Healthz serves GET /healthz, which is never limited.
func Healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
