package keyfunc

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// A Func returns the identity of the client that sent r, the string a rate
// limit is counted against. It returns an error wrapping [ErrNoKey] when the
// request carries nothing to key by (no API key, no user id), so callers can
// fall back to another Func, for example with [FirstOf].
//
// Every Func in this package is safe for concurrent use on different
// requests. It only reads r, except that [FormValue] replaces r.Body with an
// equivalent reader.
type Func func(r *http.Request) (string, error)

// errPrefix starts the text of every error of the package; the layers of
// one error chain say it once (errwrap.Wrap).
const errPrefix = "ratelimit: keyfunc: "

// ErrNoKey reports that a request carries no value for a [Func] to key by:
// the header, token, context value or form field is missing, empty or too
// long. Test for it with errors.Is; [FirstOf] moves on to its next Func when
// it sees it. It has a ClientError method: httplimit.ErrorStatus answers 400.
var ErrNoKey error = clientError("ratelimit: keyfunc: no key in request")

// ErrMalformed reports a request whose key cannot be read safely: a login
// body over [MaxFormBytes], a field whose body and query values differ, a
// JSON body with two members for one field. Unlike [ErrNoKey] it stops
// [FirstOf]: falling back would let a client choose which value it is
// counted under. It has a ClientError method: httplimit.ErrorStatus answers 400.
var ErrMalformed error = clientError("ratelimit: keyfunc: malformed request")

// A clientError is an error caused by the request itself.
type clientError string

func (e clientError) Error() string { return string(e) }

// ClientError marks e as caused by the request, not the server:
// httplimit.ErrorStatus answers 400 for any error that has a ClientError method
// returning true, so a client sending bad input cannot raise a server's
// 5xx rate.
func (e clientError) ClientError() bool { return true }

// Must returns f and panics if err is not nil. It is for package-level
// setup with constant arguments:
//
//	var clientIP = keyfunc.Must(keyfunc.PeerIP())
func Must(f Func, err error) Func {
	if err != nil {
		panic(err)
	}
	return f
}

// Method keys by the request method: one of the nine methods net/http
// names (GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE), or
// "OTHER" for every other method. It is meant as a part of a [Composite], to
// give reads and writes separate quotas.
//
// A client chooses the method, and Go's server accepts any token as one, so
// keying by it as sent would give a fresh quota to every method a client
// invents ("GET0", "GET1", ...); all of them share "OTHER" instead. Methods
// are case-sensitive (RFC 9110) and the server keeps them as sent, so "get"
// is "OTHER" too. An empty method, which net/http's client sends as GET, is
// "GET".
func Method() Func {
	return func(r *http.Request) (string, error) {
		return methodKey(r.Method), nil
	}
}

// methodKey returns the identity of method m.
func methodKey(m string) string {
	switch m {
	case "":
		return http.MethodGet
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// Composite keys by every one of funcs together, for example an account
// name and an address. The parts are joined unambiguously, each prefixed by
// its length ("5:alice|11:203.0.113.7"), in the same encoding as
// core.Identity, so no choice of parts can imitate another combination.
//
// If a part fails, the Composite fails with that part's error (wrapping
// [ErrNoKey] when the part had no key). Composite panics if funcs is empty
// or holds a nil Func.
func Composite(funcs ...Func) Func {
	mustNotBeNil("Composite", funcs)
	return func(r *http.Request) (string, error) {
		parts := make([]string, len(funcs))
		for i, f := range funcs {
			p, err := f(r)
			if err != nil {
				return "", errwrap.Wrap(errPrefix, fmt.Sprintf("composite part %d", i), err)
			}
			parts[i] = p
		}
		return keylayout.Identity(parts...), nil
	}
}

// FirstOf keys by the first of funcs that finds a key: FirstOf(apiKey, ip)
// keys by the API key when the request has one and by the address
// otherwise. A Func failing with [ErrNoKey] passes to the next one; any other
// error is returned at once. When none finds a key, the error wraps
// [ErrNoKey]. FirstOf panics if funcs is empty or holds a nil Func.
//
// The funcs of this package never produce the same identity for different
// kinds of value: addresses are bare ("203.0.113.7"), hashed secrets start
// with "key:", context values with "ctx:" and form fields with "form:".
func FirstOf(funcs ...Func) Func {
	mustNotBeNil("FirstOf", funcs)
	return func(r *http.Request) (string, error) {
		for _, f := range funcs {
			id, err := f(r)
			if err == nil {
				return id, nil
			}
			if !errors.Is(err, ErrNoKey) {
				return "", err
			}
		}
		return "", ErrNoKey
	}
}

func mustNotBeNil(name string, funcs []Func) {
	if len(funcs) == 0 {
		panic("ratelimit: keyfunc: " + name + ": no funcs")
	}
	for i, f := range funcs {
		if f == nil {
			panic(fmt.Sprintf("ratelimit: keyfunc: %s: funcs[%d] is nil", name, i))
		}
	}
}
