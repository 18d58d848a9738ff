package keyfunc

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
)

// ContextValue keys by the value stored under key in the request context,
// typically a user or tenant id put there by authentication middleware that
// runs before the limiter. The identity is "ctx:" followed by the value, so
// it never equals an address in [FirstOf].
//
// The value may be a string, a fmt.Stringer or an integer (int, int64,
// uint64). A missing or empty value fails with an error wrapping [ErrNoKey];
// a value of another type fails with an error that does not, as it is a
// programming mistake a fallback should not hide.
func ContextValue(key any) Func {
	return func(r *http.Request) (string, error) {
		s, err := contextString(r.Context().Value(key))
		if err != nil {
			return "", err
		}
		if s == "" {
			return "", errwrap.Wrap(errPrefix, fmt.Sprintf("context key %T", key), ErrNoKey)
		}
		return "ctx:" + s, nil
	}
}

func contextString(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case fmt.Stringer:
		return v.String(), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	default:
		return "", fmt.Errorf("ratelimit: keyfunc: context value of type %T is not a string, fmt.Stringer or integer", v)
	}
}
