package imds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EC2 IMDSv2 wire names.
const (
	EC2TokenPath      = "latest/api/token"
	EC2TokenHeader    = "X-aws-ec2-metadata-token"
	EC2TokenTTLHeader = "X-aws-ec2-metadata-token-ttl-seconds"
	// DefaultEC2TokenTTL is what cloud-init asks for.
	DefaultEC2TokenTTL = 21600 * time.Second
)

// ErrTokenRequired: the token request was refused and the policy does not
// allow falling back to IMDSv1 (on AWS: no token, no datasource).
var ErrTokenRequired = errors.New("session token (IMDSv2) required")

// EC2Token implements the IMDSv2 session: PUT latest/api/token with the TTL
// header, then the token in X-aws-ec2-metadata-token on every request. The
// token is cached until shortly before it expires. When AllowV1 is set and
// the PUT is answered with any 4xx, Token returns "" from then on (IMDSv1:
// no header), as cloud-init does for EC2-compatible clouds; without it, a
// 403, 404 or 405 fails with ErrTokenRequired (other answers with their own
// *Error). Use it as
//
//	c.Token = (&imds.EC2Token{Client: c, AllowV1: !onAWS}).Token
type EC2Token struct {
	// Client performs the PUT (its Token hook is bypassed).
	Client *Client
	// TTL requested (DefaultEC2TokenTTL).
	TTL time.Duration
	// AllowV1 permits falling back to IMDSv1.
	AllowV1 bool
	// TokenPath overrides EC2TokenPath; TTLHeader overrides
	// EC2TokenTTLHeader (AliYun uses its own names).
	TokenPath string
	TTLHeader string

	once   sync.Once
	lock   chan struct{} // a 1-slot semaphore: one PUT at a time, ctx-aware
	issued map[string]*issued
}

// issued is the session of one origin: a token is sent only to the
// origin (scheme, host, port) that issued it.
type issued struct {
	token   secret
	expires time.Time
	v1      bool
}

// secret keeps a token out of logs.
type secret string

func (secret) String() string   { return "<redacted>" }
func (secret) GoString() string { return "<redacted>" }

func (t *EC2Token) acquire(ctx context.Context) error {
	t.once.Do(func() { t.lock = make(chan struct{}, 1) })
	select {
	case t.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Token returns the current token for the base the request goes to
// (Destination, else the Client's only base), fetching one from that very
// base when needed; "" means IMDSv1. Each origin has its own token.
func (t *EC2Token) Token(ctx context.Context) (string, error) {
	base := Destination(ctx)
	if base == "" {
		if len(t.Client.BaseURLs) != 1 {
			return "", &permanent{errors.New("imds: EC2Token outside a request needs a client with one base URL")}
		}
		base = t.Client.BaseURLs[0]
	}
	if err := t.acquire(ctx); err != nil {
		return "", err
	}
	defer func() { <-t.lock }()
	origin := originOf(base)
	if t.issued == nil {
		t.issued = map[string]*issued{}
	}
	is := t.issued[origin]
	if is == nil {
		is = &issued{}
		t.issued[origin] = is
	}
	if is.v1 {
		return "", nil
	}
	now := time.Now()
	if is.token != "" && now.Before(is.expires) {
		return string(is.token), nil
	}
	ttl := t.TTL
	if ttl <= 0 {
		ttl = DefaultEC2TokenTTL
	}
	path, hdr := t.TokenPath, t.TTLHeader
	if path == "" {
		path = EC2TokenPath
	}
	if hdr == "" {
		hdr = EC2TokenTTLHeader
	}
	c := t.Client
	if len(c.BaseURLs) != 1 || originOf(c.BaseURLs[0]) != origin {
		c = c.WithBaseURL(base)
	}
	body, err := c.Do(ctx, Request{
		Method:  http.MethodPut,
		Path:    path,
		Header:  http.Header{http.CanonicalHeaderKey(hdr): {strconv.Itoa(int(ttl / time.Second))}},
		NoToken: true,
	})
	var e *Error
	if errors.As(err, &e) && e.Status >= 400 && e.Status < 500 {
		if t.AllowV1 {
			t.Client.log().Info("imds: token refused, using IMDSv1", "url", e.URL, "status", e.Status)
			is.v1 = true
			return "", nil
		}
		if e.Status == http.StatusForbidden || e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed {
			return "", fmt.Errorf("%w: %w", ErrTokenRequired, err)
		}
	}
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(body))
	if tok == "" {
		return "", fmt.Errorf("%w: empty token from %s", ErrTokenRequired, path)
	}
	if err := checkToken(tok); err != nil {
		return "", &permanent{fmt.Errorf("token from %s: %w", path, err)}
	}
	is.token = secret(tok)
	// Refresh a little early so a request never carries an expiring token.
	is.expires = now.Add(ttl - min(ttl/10, time.Minute))
	return tok, nil
}
