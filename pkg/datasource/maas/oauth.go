package maas

// OAuth 1.0 request signing as cloud-init's url_helper.oauth_headers does
// it: an oauthlib Client with signature method PLAINTEXT, its signature in
// the Authorization header. cloud-init signs MAAS requests with nothing
// else (no HMAC-SHA1), so neither does cloudroot. Pure functions: the
// nonce and the timestamp are the caller's.

import (
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
