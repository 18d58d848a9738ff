// Package secrethash names a secret (an API key, a token) without holding
// it: the identity keyfunc.Header gives a request's key, and the one core
// gives a known tier key (core.WithTierKeyIdentity), written once so that
// both name a key alike. It imports no project package.
package secrethash

import (
	"crypto/sha256"
	"encoding/base64"
)

// Hash22 returns the first 16 bytes of the SHA-256 of s in base64url
// without padding: 22 characters from [A-Za-z0-9_-].
func Hash22(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// KeyIdentity is the identity of the API key or token secret: "key:" and
// its Hash22.
func KeyIdentity(secret string) string {
	return "key:" + Hash22(secret)
}
