package imds

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// elsewhere is a server on another loopback address (127.0.0.2) that
// records what reaches it: the host a redirect must never lead to.
type elsewhere struct {
	mu      sync.Mutex
	headers []http.Header
}

func (e *elsewhere) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.headers = append(e.headers, r.Header.Clone())
	e.mu.Unlock()
	w.Write([]byte("instance-id: i-attacker\n"))
}

func (e *elsewhere) requests() []http.Header {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.headers
}

// serveOn starts h on addr ("127.0.0.2:0"); the test is skipped where the
// address cannot be bound.
func serveOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// metadataThatRedirects serves an IMDSv2 token and answers every GET with a
// 302 to target+path.
func metadataThatRedirects(target func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
			w.Write([]byte(testToken))
			return
		}
		http.Redirect(w, r, target()+r.URL.Path, http.StatusFound)
	})
}

// TestRedirectNeverLeavesTheHost: a 302 from the metadata service to
// another host, another port or another scheme is not followed, whatever
// HTTP client the caller passes in (the initramfs passes its own), so the
// IMDSv2 token and the flavour header never reach it and its body is never
// taken as metadata.
func TestRedirectNeverLeavesTheHost(t *testing.T) {
	evil := &elsewhere{}
	otherHost := serveOn(t, "127.0.0.2:0", evil)
	otherPort := serveOn(t, "127.0.0.1:0", evil)
	otherScheme := httptest.NewTLSServer(evil)
	t.Cleanup(otherScheme.Close)
	for _, tc := range []struct {
		name   string
		target string
	}{
		{"other host", otherHost.URL},
		{"other port", otherPort.URL},
		{"other scheme", otherScheme.URL},
	} {
		for _, passed := range []bool{false, true} {
			name := tc.name + "/default client"
			if passed {
				name = tc.name + "/passed client"
			}
			t.Run(name, func(t *testing.T) {
				url := serve(t, metadataThatRedirects(func() string { return tc.target }))
				c := &Client{
					BaseURLs: []string{url},
					Headers:  http.Header{"Metadata-Flavor": {"Google"}, "Metadata": {"true"}},
					Backoff:  fastBackoff(),
					Retries:  3,
				}
				if passed {
					// What the initramfs passes: a plain client, Go's
					// default redirect rule (follow 10, any host).
					tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
					tr.TLSClientConfig = otherScheme.Client().Transport.(*http.Transport).TLSClientConfig
					c.HTTP = &http.Client{Transport: tr}
				}
				c.Token = (&EC2Token{Client: c}).Token
				body, err := c.Get(t.Context(), "latest/meta-data/instance-id")
				if err == nil {
					t.Fatalf("redirect to %s accepted, body %q", tc.target, body)
				}
				if !errors.Is(err, ErrRedirect) {
					t.Errorf("err = %v, want ErrRedirect", err)
				}
				if Status(err) != http.StatusFound {
					t.Errorf("status = %d, want the 302 as evidence", Status(err))
				}
			})
		}
	}
	for _, h := range evil.requests() {
		t.Errorf("the other host was reached: token %q, Metadata-Flavor %q, Metadata %q",
			h.Get(EC2TokenHeader), h.Get("Metadata-Flavor"), h.Get("Metadata"))
	}
}

// TestRedirectSameHostFollowed: a redirect within the host (a trailing
// slash, a moved path) is still followed, with the token.
func TestRedirectSameHostFollowed(t *testing.T) {
	var tok atomic.Value
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/latest/api/token":
			w.Write([]byte(testToken))
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			tok.Store(r.Header.Get(EC2TokenHeader))
			w.Write([]byte("moved"))
		}
	}))
	c := &Client{BaseURLs: []string{url}, HTTP: &http.Client{}}
	c.Token = (&EC2Token{Client: c}).Token
	if b, err := c.Get(t.Context(), "old"); err != nil || string(b) != "moved" {
		t.Fatalf("same-host redirect: %q, %v", b, err)
	}
	if tok.Load() != testToken {
		t.Errorf("token after a same-host redirect = %v", tok.Load())
	}
}

// TestRedirectLoopIsPermanent: a redirect loop fails at once with
// ErrRedirectLoop instead of being retried as a transport error until the
// budget runs out.
func TestRedirectLoopIsPermanent(t *testing.T) {
	for _, passed := range []bool{false, true} {
		var hits atomic.Int32
		url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			if r.URL.Path == "/a" {
				http.Redirect(w, r, "/b", http.StatusFound)
				return
			}
			http.Redirect(w, r, "/a", http.StatusFound)
		}))
		c := &Client{BaseURLs: []string{url}, Backoff: fastBackoff(), Budget: 10 * time.Second}
		if passed {
			c.HTTP = &http.Client{}
		}
		_, err := c.Get(t.Context(), "a")
		if !errors.Is(err, ErrRedirectLoop) {
			t.Errorf("passed client %v: err = %v, want ErrRedirectLoop", passed, err)
		}
		if n := hits.Load(); n > MaxRedirects+1 {
			t.Errorf("passed client %v: %d requests for a loop, want at most %d (no retries)", passed, n, MaxRedirects+1)
		}
	}
}

// TestTokenCapped: a token larger than MaxTokenBytes, or one that cannot
// be sent as a header value, is refused once, not retried and not sent.
func TestTokenCapped(t *testing.T) {
	for name, tok := range map[string]string{
		"huge":    strings.Repeat("A", MaxTokenBytes+1),
		"newline": "abc\r\nX-Injected: 1",
	} {
		t.Run(name, func(t *testing.T) {
			var puts, gets atomic.Int32
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					puts.Add(1)
					w.Write([]byte(tok))
					return
				}
				gets.Add(1)
				w.Write([]byte("x"))
			}))
			c := &Client{BaseURLs: []string{url}, Backoff: fastBackoff(), Budget: 10 * time.Second}
			c.Token = (&EC2Token{Client: c}).Token
			_, err := c.Get(t.Context(), "latest/meta-data/instance-id")
			if !errors.Is(err, ErrBadToken) {
				t.Errorf("err = %v, want ErrBadToken", err)
			}
			if puts.Load() != 1 || gets.Load() != 0 {
				t.Errorf("%d token requests and %d GETs, want 1 and 0", puts.Load(), gets.Load())
			}
		})
	}
}

// tokenService issues its own token and records the tokens it is sent.
type tokenService struct {
	name    string
	getCode int // answer to GETs when not 0
	mu      sync.Mutex
	seen    []string
}

func (s *tokenService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		w.Write([]byte("token-of-" + s.name))
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, r.Header.Get(EC2TokenHeader))
	s.mu.Unlock()
	if s.getCode != 0 {
		w.WriteHeader(s.getCode)
		return
	}
	w.Write([]byte(s.name))
}

// TestTokenStaysWithItsIssuer: with several base URLs raced, each base
// only ever receives a token it issued itself, even when the token hook
// is bound to the multi-base client.
func TestTokenStaysWithItsIssuer(t *testing.T) {
	a := &tokenService{name: "a", getCode: http.StatusServiceUnavailable}
	b := &tokenService{name: "b"}
	ua, ub := serve(t, a), serve(t, b)
	c := &Client{BaseURLs: []string{ua, ub}, Stagger: -1, Backoff: fastBackoff(), Budget: 5 * time.Second}
	c.Token = (&EC2Token{Client: c}).Token
	body, err := c.Get(t.Context(), "latest/meta-data/instance-id")
	if err != nil || string(body) != "b" {
		t.Fatalf("Get = %q, %v; want b's answer", body, err)
	}
	for _, s := range []*tokenService{a, b} {
		s.mu.Lock()
		for _, tok := range s.seen {
			if tok != "token-of-"+s.name {
				t.Errorf("base %s was sent %q", s.name, tok)
			}
		}
		s.mu.Unlock()
	}
}
