// Package errwrap wraps the errors of the library's packages so that a
// chain of them says its package prefix once: a log reads "ratelimit:
// key: keyfunc: composite part 0: form field \"account\": ...", not
// "ratelimit: key: ratelimit: keyfunc: composite part 0: ratelimit:
// keyfunc: ...".
package errwrap

import "strings"

// Wrap returns err under prefix and context ("ratelimit: " and "store"
// read "ratelimit: store: <err>"), with prefix dropped from the start of
// err's own text, where an inner layer of the same package put it. The
// error unwraps to err.
func Wrap(prefix, context string, err error) error {
	return &wrapped{prefix: prefix, context: context, err: err}
}

type wrapped struct {
	prefix, context string
	err             error
}

func (w *wrapped) Error() string {
	return w.prefix + w.context + ": " + strings.TrimPrefix(w.err.Error(), w.prefix)
}

func (w *wrapped) Unwrap() error { return w.err }
