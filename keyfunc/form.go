package keyfunc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// MaxFormBytes is the largest request body [FormValue] reads. A login form
// is far smaller.
const MaxFormBytes = 64 << 10

// FormValue keys by a form field, typically the account name of a login
// form, so that "5 attempts per minute per account" holds however many
// addresses an attacker uses; combine it with the address for "per account
// and address" ([Composite]).
//
// The field is looked up as r.FormValue does for a form body: the first
// value in a POST, PUT or PATCH body (application/x-www-form-urlencoded or
// multipart/form-data), else the first value in the URL query. A JSON body
// (application/json) works too: its top-level string member name. The body is
// read (at most [MaxFormBytes]) and r.Body replaced by a reader that yields
// the same bytes, so later handlers read the whole body as sent; call the
// Func before copying the request (r.WithContext) for the copy to see it.
//
// The value is trimmed and lower-cased, so "Alice@Example.com " and
// "alice@example.com" are one account, then hashed like an API key: the
// identity is "form:" followed by 22 base64url characters, and no account
// name is stored. A missing or empty field fails with an error wrapping
// [ErrNoKey]. A body over [MaxFormBytes], a read error, or a field whose
// body and query values differ fails with an error that does not wrap
// [ErrNoKey]: a client must not escape the limit by padding the body or by
// sending one account to the handler and another to the limiter.
func FormValue(name string) (Func, error) {
	if name == "" {
		return nil, errors.New("ratelimit: keyfunc: FormValue: name: empty")
	}
	return func(r *http.Request) (string, error) {
		v, err := formField(r, name)
		if err != nil {
			return "", err
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			return "", fmt.Errorf("ratelimit: keyfunc: form field %.64q: %w", name, ErrNoKey)
		}
		return "form:" + hash22(identity([]string{name, v})), nil
	}, nil
}

// formField returns the first value of field name in the body, else in the
// query.
func formField(r *http.Request, name string) (string, error) {
	body, inBody, err := bodyField(r, name)
	if err != nil {
		return "", err
	}
	query, inQuery := firstValue(r.URL, name)
	if inBody && inQuery && body != query {
		return "", fmt.Errorf("ratelimit: keyfunc: form field %.64q differs between body and query", name)
	}
	if inBody {
		return body, nil
	}
	return query, nil
}

func firstValue(u *url.URL, name string) (string, bool) {
	if u == nil {
		return "", false
	}
	vs, _ := url.ParseQuery(u.RawQuery) // Like r.FormValue: keep what parses.
	if len(vs[name]) == 0 {
		return "", false
	}
	return vs[name][0], true
}

// bodyField reads the form body of r, restores r.Body, and returns the
// first value of field name in it.
func bodyField(r *http.Request, name string) (string, bool, error) {
	if !hasFormBody(r) {
		return "", false, nil
	}
	buf, err := peekBody(r)
	if err != nil {
		return "", false, err
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "application/x-www-form-urlencoded":
		vs, _ := url.ParseQuery(string(buf))
		if len(vs[name]) == 0 {
			return "", false, nil
		}
		return vs[name][0], true, nil
	case "multipart/form-data":
		v, ok := multipartField(buf, params["boundary"], name)
		return v, ok, nil
	case "application/json":
		v, ok := jsonField(buf, name)
		return v, ok, nil
	}
	return "", false, nil
}

// jsonField returns the top-level string member name of a JSON object.
// Anything else (not an object, not a string, invalid JSON) is absent.
func jsonField(buf []byte, name string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(buf, &obj) != nil {
		return "", false
	}
	var v string
	if raw, ok := obj[name]; !ok || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

func hasFormBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	return r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
}

// peekBody reads up to MaxFormBytes of r.Body and puts the bytes back in
// front of the rest of it.
func peekBody(r *http.Request) ([]byte, error) {
	orig := r.Body
	buf, err := io.ReadAll(io.LimitReader(orig, MaxFormBytes+1))
	r.Body = restoredBody{Reader: io.MultiReader(bytes.NewReader(buf), orig), Closer: orig}
	if err != nil {
		return nil, fmt.Errorf("ratelimit: keyfunc: read form body: %w", err)
	}
	if len(buf) > MaxFormBytes {
		return nil, fmt.Errorf("ratelimit: keyfunc: form body over %d bytes", MaxFormBytes)
	}
	return buf, nil
}

// restoredBody reads the peeked bytes, then the rest of the original body,
// and closes the original body.
type restoredBody struct {
	io.Reader
	io.Closer
}

// multipartField returns the first non-file part named name.
func multipartField(buf []byte, boundary, name string) (string, bool) {
	if boundary == "" {
		return "", false
	}
	mr := multipart.NewReader(bytes.NewReader(buf), boundary)
	for {
		p, err := mr.NextPart()
		if err != nil {
			return "", false
		}
		if p.FormName() == name && p.FileName() == "" {
			v, err := io.ReadAll(p)
			return string(v), err == nil
		}
	}
}
