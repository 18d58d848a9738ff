package keyfunc

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
	"github.com/ratelimitkit/ratelimit/internal/secrethash"
)

// MaxSecretBytes is the longest API key or token [Header] and [BearerToken]
// accept; a longer one counts as missing.
const MaxSecretBytes = 8192

// Header keys by the secret in header name, an API key such as X-API-Key.
// The secret is hashed: the identity is "key:" followed by the first 16
// bytes of its SHA-256 in base64url (22 characters), so the raw key never
// reaches a store, a log line or a metric label. When the header is
// missing, empty or longer than [MaxSecretBytes], the Func fails with an
// error wrapping [ErrNoKey]. Of repeated header lines the first counts, as
// with r.Header.Get.
//
// The key is not verified. Before authentication, a client can invent keys
// to get fresh quotas: combine it with the address ([Composite]) or limit
// after the key has been checked.
func Header(name string) (Func, error) {
	if !isToken(name, "") {
		return nil, fmt.Errorf("ratelimit: keyfunc: Header: name: %q is not a header name", name)
	}
	key := http.CanonicalHeaderKey(name)
	return func(r *http.Request) (string, error) {
		return hashSecret(key, r.Header.Get(key))
	}, nil
}

// BearerToken keys by the token of an "Authorization: Bearer <token>"
// header (RFC 6750), hashed as in [Header]. A missing header, another
// scheme (Basic) or an empty or oversized token fails with an error
// wrapping [ErrNoKey].
//
// A token that changes on every refresh (a JWT) gives the client a fresh
// quota each time; limit such clients by the subject instead, with
// [ContextValue] after authentication.
func BearerToken() Func {
	return func(r *http.Request) (string, error) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return "", errwrap.Wrap(errPrefix, "no bearer token", ErrNoKey)
		}
		return hashSecret("Authorization", strings.TrimLeft(token, " "))
	}
}

// hashSecret returns the identity of secret, read from header.
func hashSecret(header, secret string) (string, error) {
	if secret == "" || len(secret) > MaxSecretBytes {
		return "", errwrap.Wrap(errPrefix, fmt.Sprintf("%s: missing, empty or oversized", header), ErrNoKey)
	}
	return secrethash.KeyIdentity(secret), nil
}

// hash22 returns the first 16 bytes of the SHA-256 of s in base64url without
// padding: 22 characters from [A-Za-z0-9_-].
func hash22(s string) string { return secrethash.Hash22(s) }
