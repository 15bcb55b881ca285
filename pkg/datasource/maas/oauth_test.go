package maas

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHeaderGolden compares Header with what oauthlib 3.2.2's
// Client(signature_method=PLAINTEXT, nonce=..., timestamp=...).sign(url)
// returned for the same inputs (cloud-init's oauth_headers).
func TestHeaderGolden(t *testing.T) {
	const nonce, ts = "123456789012345678901700000000", "1700000000"
	for _, tc := range []struct {
		creds Credentials
		want  string
	}{
		{Credentials{ConsumerKey: "ck", TokenKey: "tk", TokenSecret: "ts"},
			`OAuth oauth_nonce="123456789012345678901700000000", oauth_timestamp="1700000000", oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="ck", oauth_token="tk", oauth_signature="%26ts"`},
		{Credentials{ConsumerKey: "Cq4N3Z9pXf", TokenKey: "hTjDWn7aHw", TokenSecret: "sEcReT&k=y/ü~._-"},
			`OAuth oauth_nonce="123456789012345678901700000000", oauth_timestamp="1700000000", oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="Cq4N3Z9pXf", oauth_token="hTjDWn7aHw", oauth_signature="%26sEcReT%2526k%253Dy%252F%25C3%25BC~._-"`},
		{Credentials{ConsumerKey: "a b", ConsumerSecret: "c+d", TokenKey: "e=f"},
			`OAuth oauth_nonce="123456789012345678901700000000", oauth_timestamp="1700000000", oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="a%20b", oauth_token="e%3Df", oauth_signature="c%252Bd%26"`},
	} {
		if got := Header(tc.creds, nonce, ts); got != tc.want {
			t.Errorf("Header(%+v):\n got %s\nwant %s", tc.creds, got, tc.want)
		}
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"AZaz09-._~":                "AZaz09-._~",
		"a b+c&d=e/f%g":             "a%20b%2Bc%26d%3De%2Ff%25g",
		"ü":                         "%C3%BC",
		"\x00\xff":                  "%00%FF",
		"!*'();:@$,?#[]":            "%21%2A%27%28%29%3B%3A%40%24%2C%3F%23%5B%5D",
		"secret&":                   "secret%26",
		"9876543210qwertyuiopASDFG": "9876543210qwertyuiopASDFG",
	} {
		got := Escape(in)
		if got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		back, err := Unescape(got)
		if err != nil || back != in {
			t.Errorf("Unescape(%q) = %q, %v; want %q", got, back, err, in)
		}
	}
	for _, bad := range []string{"%", "%4", "%zz", "a%g0"} {
		if _, err := Unescape(bad); err == nil {
			t.Errorf("Unescape(%q) succeeded", bad)
		}
	}
}

func TestParseHeader(t *testing.T) {
	// RFC 5849 §3.5.1's example, as oauthlib's docstring gives it.
	rfc := `OAuth realm="Example",
        oauth_consumer_key="0685bd9184jfhq22",
        oauth_token="ad180jjd733klru7",
        oauth_signature_method="HMAC-SHA1",
        oauth_signature="wOJIO9A2W5mFwDgiDvZbTSMK%2FPY%3D",
        oauth_timestamp="137131200",
        oauth_nonce="4572616e48616d6d65724c61686176",
        oauth_version="1.0"`
	got, err := ParseHeader(rfc)
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{
		{"realm", "Example"}, {"oauth_consumer_key", "0685bd9184jfhq22"}, {"oauth_token", "ad180jjd733klru7"},
		{"oauth_signature_method", "HMAC-SHA1"}, {"oauth_signature", "wOJIO9A2W5mFwDgiDvZbTSMK/PY="},
		{"oauth_timestamp", "137131200"}, {"oauth_nonce", "4572616e48616d6d65724c61686176"}, {"oauth_version", "1.0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RFC example (-want +got):\n%s", diff)
	}

	c := Credentials{ConsumerKey: "k,e\"y", ConsumerSecret: "cs", TokenKey: "t k", TokenSecret: "s&s"}
	got, err = ParseHeader(Header(c, "n1", "42"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Params(c, "n1", "42"), got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if sig, _ := Lookup(got, "oauth_signature"); sig != "cs&s%26s" {
		t.Errorf("signature %q", sig)
	}

	for _, bad := range []string{
		"", "OAuth", "Basic dXNlcjpwYXNz", "OAuth ", "OAuth a", `OAuth a="1", a="2"`, `OAuth a=`,
		`OAuth a="%zz"`, `OAuth a="1",, b="2"`,
	} {
		if _, err := ParseHeader(bad); !errors.Is(err, ErrMalformedHeader) {
			t.Errorf("ParseHeader(%q) = %v, want ErrMalformedHeader", bad, err)
		}
	}
	// Quoted commas and escaped quotes stay inside the value; the scheme is
	// case-insensitive.
	got, err = ParseHeader(`oauth a="x, y", b="q\"r"`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Param{{"a", "x, y"}, {"b", `q"r`}}, got); diff != "" {
		t.Errorf("quoted (-want +got):\n%s", diff)
	}
}

func TestCredentials(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want Credentials
		err  string
	}{
		{"none", nil, Credentials{}, ""},
		{"all", map[string]any{"consumer_key": "ck", "token_key": "tk", "token_secret": "ts", "consumer_secret": ""},
			Credentials{ConsumerKey: "ck", TokenKey: "tk", TokenSecret: "ts"}, ""},
		{"numeric key", map[string]any{"consumer_key": 123, "token_key": "tk", "token_secret": "ts"},
			Credentials{ConsumerKey: "123", TokenKey: "tk", TokenSecret: "ts"}, ""},
		{"only consumer_secret", map[string]any{"consumer_secret": "cs"}, Credentials{ConsumerSecret: "cs"}, ""},
		{"token_secret missing", map[string]any{"consumer_key": "ck", "token_key": "tk"}, Credentials{}, "missing token_secret"},
		{"keys missing", map[string]any{"token_secret": "ts"}, Credentials{}, "missing consumer_key, token_key"},
		{"not text", map[string]any{"consumer_key": []any{"a"}}, Credentials{}, "consumer_key: expected text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CredentialsFromConfig(tc.cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCredentialsLog: secrets never reach a log line.
func TestCredentialsLog(t *testing.T) {
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, nil))
	log.Info("creds", "c", Credentials{ConsumerKey: "ck", ConsumerSecret: "csecret", TokenKey: "tk", TokenSecret: "tsecret"})
	if strings.Contains(b.String(), "secret\"") || strings.Contains(b.String(), "tsecret") || strings.Contains(b.String(), "csecret") {
		t.Errorf("secret logged: %s", b.String())
	}
	if !strings.Contains(b.String(), "ck") || !strings.Contains(b.String(), "REDACTED") {
		t.Errorf("log line %q lacks the keys", b.String())
	}
}

// TestSigner: the timestamp follows the skew the server's Date header
// taught (cloud-init: int(time.time()) + skew), a fresh nonce each time.
func TestSigner(t *testing.T) {
	now := time.Unix(1700000000, 500_000_000)
	n := 0
	s := &signer{
		creds: Credentials{ConsumerKey: "ck", TokenKey: "tk", TokenSecret: "ts"},
		now:   func() time.Time { return now },
		nonce: func(now time.Time) string { n++; return "nonce" + string(rune('0'+n)) },
		log:   slog.New(slog.DiscardHandler),
	}
	header := func() []Param {
		t.Helper()
		h, err := s.token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ps, err := ParseHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	reply := func(status int, date string) *http.Response {
		u, _ := url.Parse("http://127.0.0.1:5240/MAAS/metadata/")
		r := &http.Response{StatusCode: status, Header: http.Header{}, Request: &http.Request{URL: u}, Body: io.NopCloser(strings.NewReader(""))}
		if date != "" {
			r.Header.Set("Date", date)
		}
		return r
	}
	ps := header()
	if ts, _ := Lookup(ps, "oauth_timestamp"); ts != "1700000000" {
		t.Errorf("timestamp %s, want 1700000000", ts)
	}
	if nc, _ := Lookup(ps, "oauth_nonce"); nc != "nonce1" {
		t.Errorf("nonce %s", nc)
	}
	for _, tc := range []struct {
		name   string
		status int
		date   string
		skew   int64
	}{
		{"200 ignored", 200, now.Add(time.Hour).UTC().Format(http.TimeFormat), 0},
		{"401 without Date", 401, "", 0},
		{"401 with a bad Date", 401, "yesterday", 0},
		{"401 an hour ahead", 401, now.Add(time.Hour).UTC().Format(http.TimeFormat), 3599},
		{"403 ten minutes behind", 403, now.Add(-10 * time.Minute).UTC().Format(http.TimeFormat), -600},
	} {
		if err := s.observe(reply(tc.status, tc.date)); err != nil {
			t.Fatalf("%s: observe failed a reply: %v", tc.name, err)
		}
		if got := s.Skew(); got != tc.skew {
			t.Errorf("%s: skew %d, want %d", tc.name, got, tc.skew)
		}
	}
	ps = header()
	if ts, _ := Lookup(ps, "oauth_timestamp"); ts != "1699999400" {
		t.Errorf("timestamp %s after a -600 s skew, want 1699999400", ts)
	}
	if nc, _ := Lookup(ps, "oauth_nonce"); nc != "nonce2" {
		t.Errorf("nonce %s, want a fresh one", nc)
	}
}

func TestRandomNonce(t *testing.T) {
	now := time.Unix(1700000000, 0)
	a, b := randomNonce(now), randomNonce(now)
	if a == b || !strings.HasSuffix(a, "1700000000") || strings.Trim(a, "0123456789") != "" {
		t.Errorf("nonces %q, %q: want distinct digits ending in the timestamp", a, b)
	}
}

// FuzzHeader: whatever the credentials, the header parses back to them.
func FuzzHeader(f *testing.F) {
	f.Add("ck", "", "tk", "ts", "123", "1700000000")
	f.Add("a b", "c+d", "e=f", "", "n", "0")
	f.Add("k,\"y", "ü", "t\\k", "s&s%", "", "")
	f.Fuzz(func(t *testing.T, ck, cs, tk, ts, nonce, stamp string) {
		c := Credentials{ConsumerKey: ck, ConsumerSecret: cs, TokenKey: tk, TokenSecret: ts}
		h := Header(c, nonce, stamp)
		got, err := ParseHeader(h)
		if err != nil {
			t.Fatalf("ParseHeader(%q): %v", h, err)
		}
		if diff := cmp.Diff(Params(c, nonce, stamp), got); diff != "" {
			t.Fatalf("round trip of %q (-want +got):\n%s", h, diff)
		}
		sig, _ := Lookup(got, "oauth_signature")
		left, right, ok := strings.Cut(sig, "&")
		if !ok {
			t.Fatalf("signature %q has no '&'", sig)
		}
		if l, err := Unescape(left); err != nil || l != cs {
			t.Fatalf("signature's consumer secret %q, want %q", l, cs)
		}
		if r, err := Unescape(right); err != nil || r != ts {
			t.Fatalf("signature's token secret %q, want %q", r, ts)
		}
	})
}

// FuzzParseHeader: any text parses or fails cleanly; what parses has
// unique names.
func FuzzParseHeader(f *testing.F) {
	f.Add(Header(Credentials{ConsumerKey: "ck", TokenKey: "tk", TokenSecret: "ts"}, "1", "2"))
	f.Add(`OAuth realm="Example", oauth_consumer_key="0685bd9184jfhq22"`)
	f.Add(`oauth a="x, y", b="q\"r"`)
	f.Add(`OAuth a="%zz",,`)
	f.Fuzz(func(t *testing.T, h string) {
		ps, err := ParseHeader(h)
		if err != nil {
			if !errors.Is(err, ErrMalformedHeader) {
				t.Fatalf("error %v is not ErrMalformedHeader", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if seen[p.Name] {
				t.Fatalf("%q twice in %q", p.Name, h)
			}
			seen[p.Name] = true
		}
	})
}
