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

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
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
// multipart/form-data), else the first value in the URL query. A body that
// is a JSON object is read whatever its Content-Type (none, text/plain,
// application/vnd.api+json) and method, because handlers read it so:
// json.NewDecoder(r.Body).Decode and gin's ShouldBindJSON look at neither,
// and a limiter that did would count {"account":"bob"} sent as text/plain
// under the account in the query. It is read the way encoding/json, and
// with it gin's and echo's binding, fills a string field tagged name: the
// top-level member whose name equals name ignoring case (strings.EqualFold:
// "Account" for "account") in the first JSON value of the body. A member
// that is null, a number, a boolean, an object or an array gives the body
// no value, as does invalid JSON or JSON that is not an object: the handler
// gets no account from them either. The body is read (at most
// [MaxFormBytes]) and r.Body replaced by a reader that yields the same
// bytes, so later handlers read the whole body as sent; call the Func
// before copying the request (r.WithContext) for the copy to see it.
//
// The value is trimmed and lower-cased (strings.ToLower), so
// "Alice@Example.com " and "alice@example.com" are one account, then hashed
// like an API key: the identity is "form:" followed by 22 base64url
// characters, and no account name is stored. Nothing else is folded: "é"
// precomposed (U+00E9) and decomposed ("e" and U+0301), or full-width
// "ａｌｉｃｅ" and "alice", are different accounts. If the application's
// account lookup treats such spellings as one account, use [FormValueFunc]
// with the same normalisation, or each spelling is a fresh quota.
//
// A missing or empty field fails with an error wrapping [ErrNoKey]. A body
// over [MaxFormBytes], a read error, a field whose body and query values
// differ (as sent), a form body that is also a JSON object with another
// value, or a JSON body with two members that match the field
// ({"account":"decoy","Account":"bob"}, where encoding/json keeps the last)
// fails with an error that does not wrap [ErrNoKey]: a client must not
// escape the limit by padding the body or by sending one account to the
// handler and another to the limiter.
//
// FormValue(name) is FormValueFunc(name, f) with an f that returns its
// argument unchanged.
func FormValue(name string) (Func, error) {
	return formValue("FormValue", name, func(s string) string { return s })
}

// FormValueFunc is [FormValue] with the application's own normalisation:
// normalize maps the value as sent to the spelling the application's
// account lookup uses, before it is trimmed, lower-cased and hashed. Two
// values are one account exactly when normalize makes them equal up to
// that folding; normalize should merge what the login merges. Merging more
// only limits more; merging less gives a client a fresh quota for every
// spelling the login accepts.
//
// Typical normalisations are a Unicode normal form (NFC, or NFKC, which
// also folds full-width letters; golang.org/x/text/unicode/norm provides
// them), or what the database's collation ignores (accents, with MySQL's
// accent-insensitive collations). Plus-addressing ("alice+news@example.com")
// and dots in Gmail addresses are the application's policy: strip them only
// if the application treats such addresses as one account. An empty result
// counts as a missing field.
//
// normalize must be safe for concurrent use; it must not be nil.
func FormValueFunc(name string, normalize func(string) string) (Func, error) {
	if normalize == nil {
		return nil, errors.New("ratelimit: keyfunc: FormValueFunc: normalize: nil")
	}
	return formValue("FormValueFunc", name, normalize)
}

// formValue returns the Func of [FormValueFunc] for the constructor fn.
func formValue(fn, name string, normalize func(string) string) (Func, error) {
	if name == "" {
		return nil, fmt.Errorf("ratelimit: keyfunc: %s: name: empty", fn)
	}
	return func(r *http.Request) (string, error) {
		v, err := formField(r, name)
		if err != nil {
			return "", err
		}
		v = strings.ToLower(strings.TrimSpace(normalize(v)))
		if v == "" {
			return "", errwrap.Wrap(errPrefix, fmt.Sprintf("form field %.64q", name), ErrNoKey)
		}
		return "form:" + hash22(keylayout.Identity(name, v)), nil
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
		return "", errwrap.Wrap(errPrefix, fmt.Sprintf("form field %.64q differs between body and query", name), ErrMalformed)
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

// bodyField reads the body of r, restores r.Body, and returns the first
// value of field name in it: in the form, for a form body, and in the JSON
// object the body is, whatever its Content-Type. A body that is both and
// gives two values is an error.
func bodyField(r *http.Request, name string) (string, bool, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return "", false, nil
	}
	buf, err := peekBody(r)
	if err != nil {
		return "", false, err
	}
	form, inForm := formBodyField(r, buf, name)
	obj, inObj, err := jsonField(buf, name)
	switch {
	case err != nil:
		return "", false, err
	case inForm && inObj && form != obj:
		return "", false, errwrap.Wrap(errPrefix, fmt.Sprintf("form field %.64q differs between the form and the JSON object in the body", name), ErrMalformed)
	case inForm:
		return form, true, nil
	}
	return obj, inObj, nil
}

// formBodyField returns the first value of field name in buf, the body of
// r, where r.ParseForm or r.ParseMultipartForm would read it: in a POST,
// PUT or PATCH body whose Content-Type is a form's.
func formBodyField(r *http.Request, buf []byte, name string) (string, bool) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
		return "", false
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "application/x-www-form-urlencoded":
		vs, _ := url.ParseQuery(string(buf))
		if len(vs[name]) == 0 {
			return "", false
		}
		return vs[name][0], true
	case "multipart/form-data":
		return multipartField(buf, params["boundary"], name)
	}
	return "", false
}

// jsonField returns the top-level member name of the JSON object in buf,
// matched as encoding/json matches a struct field: member names compare
// equal under strings.EqualFold after unescaping, so, as in encoding/json,
// "Account" and "ACCOUNT" match "account", the Kelvin sign matches "k" and
// the long s matches "s". Only the first JSON value in buf is read, as
// json.Decoder.Decode reads it.
//
// Invalid JSON, JSON that is not an object, and a member that is not a
// string (null, a number, an object) are absent: encoding/json fails on
// them or leaves a string field empty, so the handler has no account to
// log in either. Two members that match name are an error.
func jsonField(buf []byte, name string) (string, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(buf))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false, nil
	}
	var value any
	matches := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false, nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", false, nil
		}
		if key, _ := t.(string); strings.EqualFold(key, name) {
			matches++
			_ = json.Unmarshal(raw, &value) // Fails only on a number too big for float64: no string either.
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return "", false, nil
	}
	if matches > 1 {
		return "", false, errwrap.Wrap(errPrefix, fmt.Sprintf("form field %.64q: %d JSON members match it, ignoring case", name, matches), ErrMalformed)
	}
	v, ok := value.(string)
	return v, ok, nil
}

// peekBody reads up to MaxFormBytes of r.Body and puts the bytes back in
// front of the rest of it.
func peekBody(r *http.Request) ([]byte, error) {
	orig := r.Body
	buf, err := io.ReadAll(io.LimitReader(orig, MaxFormBytes+1))
	r.Body = restoredBody{Reader: io.MultiReader(bytes.NewReader(buf), orig), Closer: orig}
	if err != nil {
		return nil, errwrap.Wrap(errPrefix, "read form body", fmt.Errorf("%w: %w", ErrMalformed, err))
	}
	if len(buf) > MaxFormBytes {
		return nil, errwrap.Wrap(errPrefix, fmt.Sprintf("form body over %d bytes", MaxFormBytes), ErrMalformed)
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
