package keyfunc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
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
	return "form:" + hash22(keylayout.Identity("account", value))
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
		{"JSON member that is a number, query fills in", "POST", "/login?account=alice", "application/json", `{"account":42}`, accountKey("alice"), false},
		{"JSON member that is null, query fills in", "POST", "/login?account=alice", "application/json", `{"account":null}`, accountKey("alice"), false},
		{"JSON member nested, not top-level", "POST", "/login", "application/json", `{"user":{"account":"alice"}}`, "", true},
		{"JSON that is not an object", "POST", "/login", "application/json", `["alice"]`, "", true},
		{"invalid JSON", "POST", "/login", "application/json", `{"account":"alice"`, "", true},
		{"JSON body and query differ", "POST", "/login?account=bob", "application/json", `{"account":"alice"}`, "", false},
		{"JSON body without Content-Type", "POST", "/login", "", `{"account":"Alice","password":"x"}`, accountKey("alice"), false},
		{"JSON body without Content-Type and query differ", "POST", "/login?account=decoy-1", "", `{"account":"alice"}`, "", false},
		{"text/plain JSON body and query differ", "POST", "/login?account=decoy-1", "text/plain", `{"account":"alice","password":"x"}`, "", false},
		{"text/plain JSON body", "POST", "/login", "text/plain; charset=utf-8", `{"account":"alice"}`, accountKey("alice"), false},
		{"application/vnd.api+json body", "POST", "/login", "application/vnd.api+json", `{"account":"alice"}`, accountKey("alice"), false},
		{"application/merge-patch+json body and query differ", "PATCH", "/login?account=decoy-1", "application/merge-patch+json", `{"account":"alice"}`, "", false},
		{"application/json-patch+json body and query differ", "POST", "/login?account=decoy-1", "application/json-patch+json", `{"account":"alice"}`, "", false},
		{"JSON body with charset and query differ", "POST", "/login?account=decoy-1", "application/json; charset=utf-8", `{"account":"alice"}`, "", false},
		{"JSON body with an invalid Content-Type", "POST", "/login?account=decoy-1", "application/json; charset", `{"account":"alice"}`, "", false},
		{"text/plain body that is not JSON, query", "POST", "/login?account=alice", "text/plain", "account=bob", accountKey("alice"), false},
		{"text/plain JSON array, query", "POST", "/login?account=alice", "text/plain", `[{"account":"bob"}]`, accountKey("alice"), false},
		{"urlencoded Content-Type, JSON body and query differ", "POST", "/login?account=decoy-1", urlencoded, `{"account":"alice"}`, "", false},
		{"urlencoded Content-Type, JSON body that is also a form", "POST", "/login", urlencoded, `{"x":"&account=decoy-1&","account":"alice"}`, "", false},
		{"multipart Content-Type, JSON preamble before the parts", "POST", "/login", mpType, `{"account":"bob"}` + "\r\n" + mp, "", false},
		{"multipart Content-Type, JSON preamble with the same value", "POST", "/login", mpType, `{"account":"alice"}` + "\r\n" + mp, accountKey("alice"), false},
		{"GET JSON body and query differ", "GET", "/login?account=decoy-1", "application/json", `{"account":"alice"}`, "", false},
		{"DELETE JSON body", "DELETE", "/login", "", `{"account":"alice"}`, accountKey("alice"), false},
		{"GET body that is not JSON, query", "GET", "/login?account=alice", "text/plain", "account=bob", accountKey("alice"), false},
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

// appView decodes body as a handler does with encoding/json (as gin's and
// echo's JSON binding do): into a struct whose one string field is tagged
// field, with a json.Decoder.
func appView(t *testing.T, field, body string) (string, error) {
	t.Helper()
	typ := reflect.StructOf([]reflect.StructField{{
		Name: "Field",
		Type: reflect.TypeFor[string](),
		Tag:  reflect.StructTag(`json:"` + field + `"`),
	}})
	v := reflect.New(typ)
	err := json.NewDecoder(strings.NewReader(body)).Decode(v.Interface())
	return v.Elem().Field(0).String(), err
}

// TestFormValueJSONMembers checks that a JSON body is read the way
// encoding/json fills a struct field: member names match case-insensitively,
// with its folds, and a second matching member is an error rather than a
// second account. A JSON object body is read whatever its Content-Type, as
// handlers that decode r.Body (gin's ShouldBindJSON) read it.
func TestFormValueJSONMembers(t *testing.T) {
	tests := []struct {
		name      string
		field     string
		body      string
		want      string // the value keyed by, or "" for an error
		wantNoKey bool   // the error wraps ErrNoKey
	}{
		{"exact name", "account", `{"account":"bob"}`, "bob", false},
		{"capitalised name", "account", `{"Account":"bob"}`, "bob", false},
		{"upper-case name", "account", `{"ACCOUNT":"bob"}`, "bob", false},
		{"spaces around tokens", "account", " {\n\t\"account\" :\t\"bob\" ,\"x\" : 1 } ", "bob", false},
		{"escaped value", "account", `{"account":"\u0062ob"}`, "bob", false},
		{"escaped name", "account", `{"\u0041ccount":"bob"}`, "bob", false},
		{"long s matches s", "username", `{"u\u017fername":"bob"}`, "bob", false},
		{"Kelvin sign matches k", "key", `{"\u212aey":"bob"}`, "bob", false},
		{"other members are skipped", "account", `{"user":{"account":"eve"},"accounts":"eve","account":"bob","n":[1,{"account":2}]}`, "bob", false},
		{"data after the object is not read, as by json.Decoder", "account", `{"account":"bob"} {"account":"eve"}`, "bob", false},
		{"decoy, then a case variant", "account", `{"account":"decoy-1","Account":"bob"}`, "", false},
		{"case variant, then the exact name", "account", `{"ACCOUNT":"bob","account":"decoy-1"}`, "", false},
		{"exact duplicate", "account", `{"account":"bob","account":"decoy-1"}`, "", false},
		{"duplicate with the same value", "account", `{"account":"bob","account":"bob"}`, "", false},
		{"duplicate that is null", "account", `{"account":"bob","account":null}`, "", false},
		{"duplicate that is a number", "account", `{"account":7,"Account":"bob"}`, "", false},
		{"duplicate by the long s fold", "username", `{"username":"decoy-1","u\u017fername":"bob"}`, "", false},
		{"duplicate by the Kelvin fold", "key", `{"key":"decoy-1","\u212aey":"bob"}`, "", false},
		{"duplicate in invalid JSON is absent", "account", `{"account":"bob","Account":"eve",}`, "", true},
		{"null is absent", "account", `{"account":null}`, "", true},
		{"number is absent", "account", `{"account":42}`, "", true},
		{"boolean is absent", "account", `{"account":true}`, "", true},
		{"object is absent", "account", `{"account":{"name":"bob"}}`, "", true},
		{"similar names are not the field", "account", `{"acount":"bob","account_":"bob","ac count":"bob"}`, "", true},
		{"trailing comma is invalid", "account", `{"account":"bob",}`, "", true},
		{"invalid after the member", "account", `{"account":"bob","x":}`, "", true},
		{"empty body", "account", ``, "", true},
	}
	contentTypes := []string{"application/json", "", "text/plain", "application/vnd.api+json"}
	for _, tt := range tests {
		for _, ct := range contentTypes {
			t.Run(tt.name+"/Content-Type="+ct, func(t *testing.T) {
				r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(tt.body))
				if ct != "" {
					r.Header.Set("Content-Type", ct)
				}
				got, err := Must(FormValue(tt.field))(r)

				rest, readErr := io.ReadAll(r.Body)
				require.NoError(t, readErr)
				assert.Equal(t, tt.body, string(rest), "the body must be readable again, unchanged")
				if tt.want == "" {
					require.Error(t, err)
					assert.Equal(t, tt.wantNoKey, errors.Is(err, ErrNoKey), "error %v wraps ErrNoKey", err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "form:"+hash22(keylayout.Identity(tt.field, tt.want)), got)
				app, appErr := appView(t, tt.field, tt.body)
				require.NoError(t, appErr)
				assert.Equal(t, tt.want, app, "the handler logs in as the account that is counted")
			})
		}
	}
}

// fullWidth maps full-width ASCII ("ＡＢＣ", U+FF01 to U+FF5E) to ASCII: the
// part of NFKC a test can write without golang.org/x/text.
func fullWidth(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 0xff01 && c <= 0xff5e {
			return c - 0xff01 + '!'
		}
		return c
	}, s)
}

// TestFormValueFunc checks that the application's normalisation decides
// which spellings are one account, and that FormValue itself folds only
// case and surrounding spaces.
func TestFormValueFunc(t *testing.T) {
	composeE := func(s string) string { return strings.ReplaceAll(s, "e\u0301", "\u00e9") }
	stripPlus := func(s string) string {
		local, domain, ok := strings.Cut(s, "@")
		local, _, _ = strings.Cut(local, "+")
		if !ok {
			return local
		}
		return local + "@" + domain
	}
	tests := []struct {
		name      string
		normalize func(string) string // nil: FormValue
		a, b      string
		same      bool
	}{
		{"FormValue: precomposed and decomposed é are two accounts", nil, "jos\u00e9", "jose\u0301", false},
		{"FormValue: full-width letters are another account", nil, "alice", "ａｌｉｃｅ", false},
		{"FormValue: Unicode spaces are trimmed", nil, "alice", "\u3000alice\u00a0", true},
		{"FormValue: plus-addressing is another account", nil, "alice@example.com", "alice+x@example.com", false},
		{"composing é makes one account", composeE, "jos\u00e9", "jose\u0301", true},
		{"full-width upper case folds after normalize", fullWidth, "alice", "ＡＬＩＣＥ", true},
		{"stripping plus-addressing makes one account", stripPlus, "alice@example.com", " Alice+x@Example.com", true},
		{"normalize does not merge other accounts", stripPlus, "alice@example.com", "bob@example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Must(FormValue("account"))
			if tt.normalize != nil {
				f = Must(FormValueFunc("account", tt.normalize))
			}
			key := func(v string) string {
				r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(`{"account":"`+v+`"}`))
				r.Header.Set("Content-Type", "application/json")
				id, err := f(r)
				require.NoError(t, err)
				return id
			}
			assert.Equal(t, tt.same, key(tt.a) == key(tt.b))
		})
	}
}

func TestFormValueFuncEmptyResultIsNoKey(t *testing.T) {
	f := Must(FormValueFunc("account", func(string) string { return " " }))
	r := httptest.NewRequest(http.MethodGet, "/login?account=alice", nil)
	_, err := f(r)
	assert.ErrorIs(t, err, ErrNoKey)
}

func TestFormValueIsFormValueFuncUnchanged(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/login?account=+Alice", nil)
	want, err := Must(FormValue("account"))(r)
	require.NoError(t, err)
	got, err := Must(FormValueFunc("account", func(s string) string { return s }))(r)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, accountKey("alice"), got)
}
