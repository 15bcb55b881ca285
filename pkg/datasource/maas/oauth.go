package maas

// OAuth 1.0 request signing as cloud-init's url_helper.oauth_headers does
// it: an oauthlib Client with signature method PLAINTEXT, its signature in
// the Authorization header. cloud-init signs MAAS requests with nothing
// else (no HMAC-SHA1), so neither does cloudroot. Pure functions: the
// nonce and the timestamp are the caller's.

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// SignatureMethod is the only oauth_signature_method cloud-init uses.
const SignatureMethod = "PLAINTEXT"

// Credentials are the MAAS node's OAuth credentials (cloud-init's
// consumer_key, consumer_secret, token_key, token_secret). Logging them
// shows the keys only.
type Credentials struct {
	ConsumerKey    string
	ConsumerSecret string
	TokenKey       string
	TokenSecret    string
}

// LogValue redacts the secrets.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("consumer_key", c.ConsumerKey), slog.String("token_key", c.TokenKey),
		slog.String("secrets", "REDACTED"))
}

// Enabled reports whether requests are signed at all: cloud-init's
// OauthUrlHelper signs only when one of token_key, token_secret,
// consumer_key is set.
func (c Credentials) Enabled() bool {
	return c.ConsumerKey != "" || c.TokenKey != "" || c.TokenSecret != ""
}

// Check is OauthUrlHelper's rule: all or none of token_key, token_secret
// and consumer_key (consumer_secret may be empty, as MAAS issues it).
func (c Credentials) Check() error {
	if !c.Enabled() {
		return nil
	}
	var missing []string
	for _, k := range []struct{ name, v string }{
		{"consumer_key", c.ConsumerKey}, {"token_key", c.TokenKey}, {"token_secret", c.TokenSecret},
	} {
		if k.v == "" {
			missing = append(missing, k.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("all or none of token_key, token_secret, consumer_key must be set (missing %s)", strings.Join(missing, ", "))
	}
	return nil
}

// Escape is RFC 5849 §3.6 percent-encoding (oauthlib's utils.escape:
// Python's quote with "~" safe): every byte but ALPHA, DIGIT, "-", ".",
// "_", "~" becomes %XX with upper-case hex.
func Escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// Unescape undoes Escape (any %XX is decoded; a malformed escape is an
// error). "+" stays "+", as in oauthlib's unquote.
func Unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape in %q", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("bad escape %q in %q", s[i:i+3], s)
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// PlaintextSignature is oauthlib's sign_plaintext: the escaped consumer
// secret, "&", the escaped token secret.
func PlaintextSignature(consumerSecret, tokenSecret string) string {
	return Escape(consumerSecret) + "&" + Escape(tokenSecret)
}

// Param is one OAuth protocol parameter.
type Param struct {
	Name, Value string
}

// Params are the protocol parameters oauthlib's Client.get_oauth_params
// makes for a PLAINTEXT request, in its order, signature last.
func Params(c Credentials, nonce, timestamp string) []Param {
	ps := []Param{
		{"oauth_nonce", nonce},
		{"oauth_timestamp", timestamp},
		{"oauth_version", "1.0"},
		{"oauth_signature_method", SignatureMethod},
		{"oauth_consumer_key", c.ConsumerKey},
	}
	if c.TokenKey != "" {
		ps = append(ps, Param{"oauth_token", c.TokenKey})
	}
	return append(ps, Param{"oauth_signature", PlaintextSignature(c.ConsumerSecret, c.TokenSecret)})
}

// Header is the Authorization header value oauthlib's Client.sign returns
// for a PLAINTEXT request (prepare_headers: `OAuth name="value", ...`, names
// and values escaped).
func Header(c Credentials, nonce, timestamp string) string {
	ps := Params(c, nonce, timestamp)
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = Escape(p.Name) + `="` + Escape(p.Value) + `"`
	}
	return "OAuth " + strings.Join(parts, ", ")
}

// ErrMalformedHeader is returned by ParseHeader for text that is not an
// OAuth Authorization header.
var ErrMalformedHeader = errors.New("malformed OAuth authorization header")

// ParseHeader parses an OAuth Authorization header value as oauthlib's
// parse_authorization_header does (the "OAuth " scheme, case-insensitive;
// a comma-separated list whose quoted strings may hold commas; name=value
// items with the quotes removed) and unescapes names and values. A realm
// is returned as written. Duplicate names are an error.
func ParseHeader(h string) ([]Param, error) {
	const scheme = "oauth "
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return nil, fmt.Errorf("%w: no OAuth scheme", ErrMalformedHeader)
	}
	var out []Param
	seen := map[string]bool{}
	for _, item := range splitList(h[len(scheme):]) {
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%w: item %q has no '='", ErrMalformedHeader, item)
		}
		switch {
		case value == "":
			return nil, fmt.Errorf("%w: item %q has no value", ErrMalformedHeader, item)
		case value == `"`:
			value = ""
		case value[0] == '"' && value[len(value)-1] == '"':
			value = value[1 : len(value)-1]
		}
		n, err := Unescape(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformedHeader, err)
		}
		if n != "realm" {
			if value, err = Unescape(value); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrMalformedHeader, n, err)
			}
		}
		if seen[n] {
			return nil, fmt.Errorf("%w: %s given twice", ErrMalformedHeader, n)
		}
		seen[n] = true
		out = append(out, Param{n, value})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no parameters", ErrMalformedHeader)
	}
	return out, nil
}

// splitList is urllib's parse_http_list: split at commas outside double
// quotes (a backslash escapes the next character inside quotes), trim
// each part, drop a trailing empty one.
func splitList(s string) []string {
	var out []string
	var part strings.Builder
	escape, quote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escape:
			part.WriteByte(c)
			escape = false
			continue
		case quote:
			if c == '\\' {
				escape = true
				continue
			}
			if c == '"' {
				quote = false
			}
			part.WriteByte(c)
			continue
		case c == ',':
			out = append(out, part.String())
			part.Reset()
			continue
		case c == '"':
			quote = true
		}
		part.WriteByte(c)
	}
	if part.Len() > 0 {
		out = append(out, part.String())
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// Lookup returns the value of the parameter name in ps.
func Lookup(ps []Param, name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}
