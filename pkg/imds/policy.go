package imds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The redirect and token policy every Client applies, whatever HTTP client
// it is given (a caller's *http.Client keeps its transport; its redirect
// rule is replaced):
//
//   - A redirect is followed only to the same origin as the request it
//     answers: same scheme, same host, same port. Anything else is not
//     followed and fails with ErrRedirect (an *Error carrying the 3xx
//     status), never retried. Session tokens, Metadata-Flavor, Metadata:
//     true and every other header the client sends therefore never reach
//     a host they were not meant for, and no other host's body is taken as
//     metadata. A Client with FollowOffHost (include fetching, which sends
//     no credentials) follows a redirect to another host over http or
//     https, never from https down to http, and strips every header but
//     User-Agent on that hop.
//   - More than MaxRedirects redirects, or a redirect back to a URL already
//     visited, fails with ErrRedirectLoop, never retried.
//   - A session token longer than MaxTokenBytes, or with bytes a header
//     value cannot carry, fails with ErrBadToken, never retried, and is
//     never sent.
const (
	// MaxRedirects bounds the redirects one request follows.
	MaxRedirects = 5
	// MaxTokenBytes bounds a session token (EC2's are about 60 bytes).
	MaxTokenBytes = 4096
)

// Policy errors; each is permanent (retrying cannot fix it).
var (
	// ErrRedirect: a redirect to another origin was refused.
	ErrRedirect = errors.New("redirect to another origin refused")
	// ErrRedirectLoop: too many redirects, or one back to a visited URL.
	ErrRedirectLoop = errors.New("redirect loop")
	// ErrBadToken: the session token is too large or not a header value.
	ErrBadToken = errors.New("unusable session token")
)

// sameOrigin reports whether a and b share scheme, host and port (the
// scheme's default port when none is written).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// offOrigin is returned by checkRedirect to stop at the 3xx reply, which
// once1 then reports as ErrRedirect.
var offOrigin = http.ErrUseLastResponse

// checkRedirect is the http.Client.CheckRedirect of every Client.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirectLoop, MaxRedirects)
	}
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			return fmt.Errorf("%w: back to %s", ErrRedirectLoop, req.URL.Redacted())
		}
	}
	prev := via[len(via)-1].URL
	if sameOrigin(prev, req.URL) {
		return nil
	}
	s := strings.ToLower(req.URL.Scheme)
	if !c.FollowOffHost || (s != "http" && s != "https") ||
		(strings.EqualFold(prev.Scheme, "https") && s != "https") {
		return offOrigin
	}
	ua := req.Header.Get("User-Agent")
	for k := range req.Header {
		delete(req.Header, k)
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	return nil
}

// redirectError turns a 3xx reply that was not followed into the
// ErrRedirect evidence.
func redirectError(resp *http.Response) error {
	loc := resp.Header.Get("Location")
	if u, err := resp.Request.URL.Parse(loc); err == nil {
		loc = u.Redacted()
	}
	return &permanent{fmt.Errorf("%w: %s", ErrRedirect, loc)}
}

// checkToken vets a session token before it is cached or sent.
func checkToken(tok string) error {
	if len(tok) > MaxTokenBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrBadToken, len(tok), MaxTokenBytes)
	}
	for i := 0; i < len(tok); i++ {
		if b := tok[i]; b < 0x20 || b > 0x7e {
			return fmt.Errorf("%w: byte %#x at %d", ErrBadToken, b, i)
		}
	}
	return nil
}

// isRedirect reports the statuses Go's client follows.
func isRedirect(s int) bool {
	switch s {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

type destKey struct{}

// Destination is the base URL the request a Token hook is called for
// goes to ("" outside a request): a hook that holds tokens per service
// returns only one issued by that base.
func Destination(ctx context.Context) string {
	s, _ := ctx.Value(destKey{}).(string)
	return s
}

// originOf is scheme://host:port of a base URL, the key tokens are held
// under.
func originOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port(u)
}
