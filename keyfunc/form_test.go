package keyfunc

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// multipartBody returns a multipart form with the given fields, in order,
// and its Content-Type.
func multipartBody(t *testing.T, fields ...[2]string) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		require.NoError(t, w.WriteField(f[0], f[1]))
	}
	require.NoError(t, w.Close())
	return buf.String(), w.FormDataContentType()
}

// accountKey is the identity FormValue("account") gives value.
func accountKey(value string) string {
	return "form:" + hash22(identity([]string{"account", value}))
}

func TestFormValue(t *testing.T) {
	const urlencoded = "application/x-www-form-urlencoded"
	mp, mpType := multipartBody(t, [2]string{"password", "hunter2"}, [2]string{"account", "alice"}, [2]string{"account", "bob"})
	mpWithFile, mpWithFileType := func() (string, string) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		fw, err := w.CreateFormFile("account", "evil.txt")
		require.NoError(t, err)
		_, err = fw.Write([]byte("mallory"))
		require.NoError(t, err)
		require.NoError(t, w.WriteField("account", "alice"))
		require.NoError(t, w.Close())
		return buf.String(), w.FormDataContentType()
	}()

	tests := []struct {
		name        string
		method      string
		target      string
		contentType string
		body        string
		want        string // identity, or "" for an error
		wantNoKey   bool   // the error wraps ErrNoKey
	}{
		{"urlencoded body", "POST", "/login", urlencoded, "account=alice&password=hunter2", accountKey("alice"), false},
		{"first value counts", "POST", "/login", urlencoded, "account=alice&account=bob", accountKey("alice"), false},
		{"case and spaces folded", "POST", "/login", urlencoded, "account=+Alice%40Example.COM+", accountKey("alice@example.com"), false},
		{"charset parameter", "POST", "/login", urlencoded + "; charset=utf-8", "account=alice", accountKey("alice"), false},
		{"multipart body", "POST", "/login", mpType, mp, accountKey("alice"), false},
		{"multipart file part is not the field", "POST", "/login", mpWithFileType, mpWithFile, accountKey("alice"), false},
		{"PUT body", "PUT", "/login", urlencoded, "account=alice", accountKey("alice"), false},
		{"query only", "GET", "/login?account=alice", "", "", accountKey("alice"), false},
		{"GET body is ignored", "GET", "/login", urlencoded, "account=alice", "", true},
		{"same value in body and query", "POST", "/login?account=alice", urlencoded, "account=alice", accountKey("alice"), false},
		{"query fills in for a body without the field", "POST", "/login?account=alice", urlencoded, "password=x", accountKey("alice"), false},
		{"JSON body", "POST", "/login", "application/json", `{"account":"Alice","password":"x"}`, accountKey("alice"), false},
		{"JSON body with charset", "POST", "/login", "application/json; charset=utf-8", `{"account":"alice"}`, accountKey("alice"), false},
		{"JSON member that is not a string", "POST", "/login", "application/json", `{"account":["alice"]}`, "", true},
		{"JSON member nested, not top-level", "POST", "/login", "application/json", `{"user":{"account":"alice"}}`, "", true},
		{"JSON that is not an object", "POST", "/login", "application/json", `["alice"]`, "", true},
		{"invalid JSON", "POST", "/login", "application/json", `{"account":"alice"`, "", true},
		{"JSON body and query differ", "POST", "/login?account=bob", "application/json", `{"account":"alice"}`, "", false},
		{"missing", "POST", "/login", urlencoded, "password=hunter2", "", true},
		{"empty", "POST", "/login", urlencoded, "account=+&password=hunter2", "", true},
		{"body and query differ", "POST", "/login?account=bob", urlencoded, "account=alice", "", false},
		{"body over MaxFormBytes", "POST", "/login", urlencoded, "account=alice&pad=" + strings.Repeat("x", MaxFormBytes), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			got, err := Must(FormValue("account"))(r)

			rest, readErr := io.ReadAll(r.Body)
			require.NoError(t, readErr)
			assert.Equal(t, tt.body, string(rest), "the body must be readable again, unchanged")
			if tt.want == "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantNoKey, errors.Is(err, ErrNoKey), "error %v wraps ErrNoKey", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "alice")
		})
	}
}

// closeRecorder records whether the original body was closed.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestFormValueRestoresBodyForTheHandler(t *testing.T) {
	body := "account=alice&password=hunter2"
	orig := &closeRecorder{Reader: strings.NewReader(body)}
	r := httptest.NewRequest(http.MethodPost, "/login", nil)
	r.Body = orig
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")

	key := Composite(Must(FormValue("account")), Must(PeerIP()))
	_, err := key(r)
	require.NoError(t, err)

	// The handler parses the form as usual and sees every field.
	require.NoError(t, r.ParseForm())
	assert.Equal(t, "alice", r.PostForm.Get("account"))
	assert.Equal(t, "hunter2", r.PostForm.Get("password"))
	require.NoError(t, r.Body.Close())
	assert.True(t, orig.closed, "closing the restored body closes the original")
}

func TestFormValueCalledTwiceSeesTheSameBody(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("account=alice"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	f := Must(FormValue("account"))

	first, err := f(r)
	require.NoError(t, err)
	second, err := f(r)
	require.NoError(t, err)
	assert.Equal(t, first, second)
	rest, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	assert.Equal(t, "account=alice", string(rest))
}
