package keyfunc

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// maxAddressKeyLen bounds every address identity:
// len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128").
const maxAddressKeyLen = 43

// fuzzPeers are the peers a fuzz input picks from: trusted and untrusted,
// IPv4, IPv6 and IPv4-mapped.
var fuzzPeers = []string{"10.0.0.1:1", "[fd00::1]:1", "[::ffff:10.0.0.1]:1", "203.0.113.66:1", "[2001:db8::66]:1"}

func fuzzRequest(peer uint8, name string, lines ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = fuzzPeers[int(peer)%len(fuzzPeers)]
	for _, l := range lines {
		r.Header.Add(name, l)
	}
	return r
}

// addressesIn is the fuzz oracle: every address a naive scan finds in s,
// cleaned. It knows nothing of header syntax: it drops backslashes, cuts s
// at every byte that cannot be part of an address, port or zone, and parses
// each piece as an address, with its zone cut off, or as an IPv4 address
// with a port.
func addressesIn(s string) map[netip.Addr]bool {
	found := map[netip.Addr]bool{}
	s = strings.ReplaceAll(s, `\`, "")
	pieces := strings.FieldsFunc(s, func(c rune) bool {
		return !(c < 0x80 && (isAlnum(byte(c)) || strings.ContainsRune(".:%_-", c)))
	})
	for _, p := range pieces {
		host, _, _ := strings.Cut(p, "%")
		if a, err := netip.ParseAddr(host); err == nil {
			found[clean(a)] = true
		}
		if i := strings.LastIndexByte(p, ':'); i >= 0 {
			if a, err := netip.ParseAddr(p[:i]); err == nil && a.Is4() {
				found[a] = true
			}
		}
	}
	return found
}

// checkAddressKey asserts the invariants of every address Func: no error,
// a bounded identity that is the peer's or that of an address in header.
func checkAddressKey(t *testing.T, f Func, r *http.Request, header string, mayUseHeader bool) {
	t.Helper()
	got, err := f(r)
	if err != nil {
		t.Fatalf("error %v", err)
	}
	if len(got) > maxAddressKeyLen {
		t.Fatalf("identity %q longer than %d", got, maxAddressKeyLen)
	}
	o, _ := newOptions("fuzz", nil)
	peer, _ := peerAddr(r)
	if got == o.key(peer) {
		return
	}
	if !mayUseHeader {
		t.Fatalf("identity %q is not the untrusted peer %s", got, peer)
	}
	for a := range addressesIn(header) {
		if got == o.key(a) {
			return
		}
	}
	t.Fatalf("identity %q is neither the peer %s nor an address in %q", got, peer, header)
}

// checkClientCannotChoose asserts that r, to whose header a trusted proxy
// appended client 203.0.113.7, is keyed as that client whatever the client
// sent before it: neither an address the client chose nor, however it pads
// or garbles its part, the peer's.
func checkClientCannotChoose(t *testing.T, f Func, r *http.Request) {
	t.Helper()
	got, err := f(r)
	if err != nil {
		t.Fatalf("error %v", err)
	}
	if got != "203.0.113.7" {
		t.Fatalf("identity %q, not the client 203.0.113.7 the proxy appended", got)
	}
}

func peerTrusted(r *http.Request) bool {
	peer, _ := peerAddr(r)
	ts, _ := newTrustSet("fuzz", proxies)
	return ts.contains(peer)
}

func FuzzXForwardedFor(f *testing.F) {
	f.Add(uint8(0), "6.6.6.6, 203.0.113.7, 10.0.0.2", "")
	f.Add(uint8(1), "2001:db8:1:2::7, fd00::2%eth0", "::ffff:10.0.0.3")
	f.Add(uint8(2), "[2001:db8::7]:5100", "203.0.113.7:80, garbage")
	f.Add(uint8(3), "1.1.1.1", "10.0.0.9")
	f.Add(uint8(0), "unknown,, ", "10.0.0.7")
	f.Add(uint8(0), strings.Repeat("6.6.6.6, ", MaxHops+1), "203.0.113.7")
	f.Add(uint8(1), strings.Repeat(" ", MaxHeaderBytes)+"6.6.6.6", "10.0.0.2")
	trusted := Must(XForwardedFor(proxies))
	hops1 := Must(XForwardedForHops(1))
	hops2 := Must(XForwardedForHops(2))
	f.Fuzz(func(t *testing.T, peer uint8, line1, line2 string) {
		r := fuzzRequest(peer, "X-Forwarded-For", line1, line2)
		header := line1 + "," + line2
		checkAddressKey(t, trusted, r, header, peerTrusted(r))
		checkAddressKey(t, hops1, r, header, true)
		checkAddressKey(t, hops2, r, header, true)
		// Whatever the client sent, what a trusted proxy appended decides,
		// on a line of its own or at the end of the client's line.
		for _, lines := range [][]string{{line1, "203.0.113.7"}, {line1 + ", 203.0.113.7"}} {
			checkClientCannotChoose(t, trusted, fuzzRequest(0, "X-Forwarded-For", lines...))
			checkClientCannotChoose(t, hops1, fuzzRequest(0, "X-Forwarded-For", lines...))
		}
	})
}

func FuzzForwarded(f *testing.F) {
	f.Add(uint8(0), `for=6.6.6.6, For="[2001:db8:cafe::17]:4711";proto=https`, "for=10.0.0.2")
	f.Add(uint8(1), `for="\[2001:db8::7\]:_p1", for=_hidden`, `for="[fe80::1%25eth0]"`)
	f.Add(uint8(2), `for="6.6.6.6, for=203.0.113.7`, "for=unknown;by=10.0.0.1")
	f.Add(uint8(3), "for=1.1.1.1", "")
	f.Add(uint8(0), `for=203.0.113.7;ext="a, for=6.6.6.6"`, "for=[::ffff:10.0.0.4]")
	f.Add(uint8(1), `for=6.6.6.6;ext="\", for=\"", for="\[2001:db8::7\]"`, `for="`)
	f.Add(uint8(0), strings.Repeat(`for="6.6.6.6, `, MaxHops+1), "for=10.0.0.2")
	fwd := Must(Forwarded(proxies))
	f.Fuzz(func(t *testing.T, peer uint8, line1, line2 string) {
		r := fuzzRequest(peer, "Forwarded", line1, line2)
		checkAddressKey(t, fwd, r, line1+","+line2, peerTrusted(r))
		for _, lines := range [][]string{{line1, "for=203.0.113.7"}, {line1 + ", for=203.0.113.7"}} {
			checkClientCannotChoose(t, fwd, fuzzRequest(1, "Forwarded", lines...))
		}
	})
}

func FuzzTrustedHeader(f *testing.F) {
	f.Add(uint8(0), "203.0.113.7")
	f.Add(uint8(1), "[2001:db8::7]:443")
	f.Add(uint8(2), "6.6.6.6, 203.0.113.7")
	f.Add(uint8(3), "1.1.1.1")
	realIP := Must(XRealIP(proxies))
	f.Fuzz(func(t *testing.T, peer uint8, value string) {
		r := fuzzRequest(peer, "X-Real-IP", value)
		checkAddressKey(t, realIP, r, value, peerTrusted(r))
	})
}

func FuzzParseNode(f *testing.F) {
	for _, s := range []string{"192.0.2.7", "192.0.2.7:8080", "[2001:db8::7]:_x", "::ffff:1.2.3.4", "fe80::1%eth0", "[1.2.3.4]", "1.2.3.4:99999"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, obfPort bool) {
		a, ok := parseNode(s, obfPort)
		if !ok {
			return
		}
		if !a.IsValid() || a.Is4In6() || a.Zone() != "" {
			t.Fatalf("parseNode(%q) = %v: not a clean address", s, a)
		}
		if !addressesIn(s)[a] {
			t.Fatalf("parseNode(%q) = %v: not in the input", s, a)
		}
	})
}

func FuzzPeerIP(f *testing.F) {
	for _, s := range []string{"203.0.113.7:1", "[::ffff:1.2.3.4]:80", "[fe80::1%eth0]:1", "2001:db8::1", "@", ""} {
		f.Add(s)
	}
	peer := Must(PeerIP())
	o, _ := newOptions("fuzz", nil)
	f.Fuzz(func(t *testing.T, remote string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		got, err := peer(r)
		if err != nil {
			if !errors.Is(err, ErrNoKey) {
				t.Fatalf("error %v does not wrap ErrNoKey", err)
			}
			return
		}
		if len(got) > maxAddressKeyLen {
			t.Fatalf("identity %q longer than %d", got, maxAddressKeyLen)
		}
		for a := range addressesIn(remote) {
			if got == o.key(a) {
				return
			}
		}
		t.Fatalf("identity %q is not an address in %q", got, remote)
	})
}

func FuzzSecret(f *testing.F) {
	for _, s := range []string{"Bearer tok-123", "bearer  x", "Basic abc", "Bearer", "s3cr3t"} {
		f.Add(s)
	}
	apiKey := Must(Header("X-API-Key"))
	bearer := BearerToken()
	f.Fuzz(func(t *testing.T, value string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", value)
		r.Header.Set("Authorization", value)
		for _, fn := range []Func{apiKey, bearer} {
			got, err := fn(r)
			if err != nil {
				if !errors.Is(err, ErrNoKey) {
					t.Fatalf("error %v does not wrap ErrNoKey", err)
				}
				continue
			}
			if len(got) != len("key:")+22 || !strings.HasPrefix(got, "key:") {
				t.Fatalf("identity %q is not key: and a 22-character hash", got)
			}
			if len(value) >= 8 && strings.Contains(got, value) {
				t.Fatalf("identity %q contains the secret", got)
			}
		}
	})
}

func FuzzFormValue(f *testing.F) {
	f.Add(uint8(0), "account=alice&password=x", "")
	f.Add(uint8(1), "--b\r\nContent-Disposition: form-data; name=\"account\"\r\n\r\nalice\r\n--b--\r\n", "account=alice")
	f.Add(uint8(2), "", "account=bob")
	for _, body := range jsonSeeds {
		f.Add(uint8(4), body, "account=bob")
	}
	contentTypes := []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=b", "text/plain", "", "application/json"}
	form := Must(FormValue("account"))
	f.Fuzz(func(t *testing.T, ct uint8, body, query string) {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", contentTypes[int(ct)%len(contentTypes)])
		got, err := form(r)
		rest, readErr := io.ReadAll(r.Body)
		if readErr != nil || string(rest) != body {
			t.Fatalf("body not restored: %q, %v", rest, readErr)
		}
		if err == nil && (len(got) != len("form:")+22 || !strings.HasPrefix(got, "form:")) {
			t.Fatalf("identity %q is not form: and a 22-character hash", got)
		}
	})
}

// jsonSeeds are JSON login bodies that a limiter matching member names
// differently from encoding/json would count under another account.
var jsonSeeds = []string{
	`{"account":"alice","password":"x"}`,
	`{"Account":"bob"}`,
	`{"\u0061CCOUNT":"bob"}`,
	`{"account":"decoy-1","Account":"bob"}`,
	`{"account":"bob","account":"decoy-1"}`,
	`{"account":"bob","ACCOUNT":null}`,
	`{"account":7,"Account":"bob"}`,
	`{"account":null}`,
	`{"user":{"account":"eve"},"account":"bob"} {"account":"eve"}`,
}

// FuzzFormValueJSON checks FormValue against the handler it protects: for a
// body that is a JSON object, whatever its Content-Type and method, the
// account it keys by is the one encoding/json decodes into the handler's
// struct (as json.NewDecoder(r.Body) and gin's ShouldBindJSON read it,
// ignoring both), after the same folding, whatever account the query names.
func FuzzFormValueJSON(f *testing.F) {
	for i, body := range jsonSeeds {
		f.Add(uint8(i), uint8(0), body, "")
		f.Add(uint8(i), uint8(i), body, "account=decoy-1")
	}
	f.Add(uint8(6), uint8(0), `{"x":"&account=decoy-1&","account":"bob"}`, "")
	f.Add(uint8(7), uint8(0), "{\"account\":\"bob\"}\r\n--b\r\nContent-Disposition: form-data; name=\"account\"\r\n\r\ndecoy-1\r\n--b--\r\n", "")
	contentTypes := []string{
		"application/json", "", "text/plain", "application/json; charset=utf-8", "application/vnd.api+json",
		"application/merge-patch+json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=b",
	}
	methods := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodGet, http.MethodDelete}
	form := Must(FormValue("account"))
	f.Fuzz(func(t *testing.T, ct, method uint8, body, query string) {
		contentType := contentTypes[int(ct)%len(contentTypes)]
		r := httptest.NewRequest(methods[int(method)%len(methods)], "/login", strings.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", contentType)
		got, err := form(r)
		if rest, readErr := io.ReadAll(r.Body); readErr != nil || string(rest) != body {
			t.Fatalf("body not restored: %q, %v", rest, readErr)
		}

		var login struct {
			Account string `json:"account"`
		}
		appErr := json.NewDecoder(strings.NewReader(body)).Decode(&login)
		account := strings.ToLower(strings.TrimSpace(login.Account))
		_, inQuery := firstValue(r.URL, "account")
		onlyJSON := !inQuery && !strings.Contains(contentType, "form") // The body's object is the only source.
		switch {
		case err == nil && (account != "" || onlyJSON):
			if appErr != nil || got != accountKey(account) {
				t.Fatalf("keyed %q, but the handler decodes account %q (error %v)", got, login.Account, appErr)
			}
		case err == nil:
			// Keyed by the query or a form field: the handler decodes no account.
		case errors.Is(err, ErrNoKey):
			if account != "" {
				t.Fatalf("no key (%v), but the handler decodes account %q", err, login.Account)
			}
		case len(body) <= MaxFormBytes && !strings.Contains(err.Error(), "JSON members match it") && !strings.Contains(err.Error(), "differs between"):
			t.Fatalf("unexpected error %v", err)
		}
	})
}
