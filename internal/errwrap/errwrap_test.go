package errwrap_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
)

func TestWrapSaysThePrefixOnce(t *testing.T) {
	malformed := errors.New("ratelimit: keyfunc: malformed request")
	field := errwrap.Wrap("ratelimit: keyfunc: ", `form field "account"`, malformed)
	part := errwrap.Wrap("ratelimit: keyfunc: ", "composite part 0", field)
	key := errwrap.Wrap("ratelimit: ", "key", part)
	assert.Equal(t, `ratelimit: key: keyfunc: composite part 0: form field "account": malformed request`, key.Error())
	assert.ErrorIs(t, key, malformed)
	assert.Equal(t, "ratelimit: store: dial: refused", errwrap.Wrap("ratelimit: ", "store", errors.New("dial: refused")).Error(),
		"an inner error without the prefix is kept whole")
}
