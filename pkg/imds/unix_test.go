package imds

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// serveUnix serves h over a unix socket in a temporary directory and
// returns the socket's path.
func serveUnix(t *testing.T, h http.Handler) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return sock
}

// TestUnixSocket: with UnixSocket every request goes over the socket, the
// base URL naming the host and path prefix, and the one policy (retries,
// size limit, redirects within the host) holds there too.
func TestUnixSocket(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	busy := 2
	sock := serveUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/1.0/meta-data":
			w.Write([]byte("instance-id: c1\n"))
		case "/1.0/busy":
			mu.Lock()
			defer mu.Unlock()
			if busy > 0 {
				busy--
				http.Error(w, "busy", http.StatusInternalServerError)
				return
			}
			w.Write([]byte("done"))
		case "/1.0/big":
			w.Write([]byte(strings.Repeat("x", 64)))
		case "/1.0/moved":
			http.Redirect(w, r, "/1.0/meta-data", http.StatusFound)
		case "/1.0/away":
			http.Redirect(w, r, "http://elsewhere/1.0/meta-data", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	c := &Client{BaseURLs: []string{"http://lxd/1.0"}, UnixSocket: sock, Backoff: fastBackoff(), Retries: 5, MaxBytes: 32}
	defer c.CloseIdleConnections()
	ctx := context.Background()

	if b, err := c.Get(ctx, "meta-data"); err != nil || string(b) != "instance-id: c1\n" {
		t.Errorf("meta-data: %q, %v", b, err)
	}
	if b, err := c.Get(ctx, "busy"); err != nil || string(b) != "done" {
		t.Errorf("busy: %q, %v", b, err)
	}
	if _, err := c.Get(ctx, "big"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: err = %v, want ErrTooLarge", err)
	}
	if _, err := c.Get(ctx, "none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("none: err = %v, want ErrNotFound", err)
	}
	if b, err := c.Get(ctx, "moved"); err != nil || string(b) != "instance-id: c1\n" {
		t.Errorf("redirect within the host: %q, %v", b, err)
	}
	if _, err := c.Get(ctx, "away"); Status(err) != http.StatusFound {
		t.Errorf("redirect to another host: err = %v, want the 302 itself", err)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	want := strings.Join([]string{
		"GET lxd/1.0/meta-data",
		"GET lxd/1.0/busy", "GET lxd/1.0/busy", "GET lxd/1.0/busy",
		"GET lxd/1.0/big",
		"GET lxd/1.0/none",
		"GET lxd/1.0/moved", "GET lxd/1.0/meta-data",
		"GET lxd/1.0/away",
	}, "\n")
	if got != want {
		t.Errorf("requests on the socket:\n%s\nwant:\n%s", got, want)
	}
}

// TestUnixSocketDead: a socket nobody listens on is a transport failure
// naming the URL, retried like any other within Retries.
func TestUnixSocketDead(t *testing.T) {
	dead := filepath.Join(t.TempDir(), "dead")
	l, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	c := &Client{BaseURLs: []string{"http://lxd"}, UnixSocket: dead, Backoff: fastBackoff(), Retries: 2, Budget: -1}
	_, err = c.Get(context.Background(), "1.0")
	var e *Error
	if !errors.As(err, &e) || e.Status != 0 || e.Attempts != 3 || !strings.Contains(err.Error(), "http://lxd/1.0") {
		t.Errorf("err = %v, want a transport *Error after 3 attempts", err)
	}
}

// TestRetryHook: Retry decides which failures are retried (here a 404 is
// and a 503 is not), Error carries the reply's body, and failures retrying
// cannot fix are never handed to the hook.
func TestRetryHook(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		switch {
		case r.URL.Path == "/late" && n < 3:
			http.NotFound(w, r)
		case r.URL.Path == "/late":
			w.Write([]byte("here"))
		case r.URL.Path == "/unavailable":
			http.Error(w, "go away", http.StatusServiceUnavailable)
		case r.URL.Path == "/big":
			http.Error(w, strings.Repeat("x", 64), http.StatusNotFound)
		}
	}))
	defer srv.Close()
	var asked []int
	c := &Client{BaseURLs: []string{srv.URL}, Backoff: fastBackoff(), Retries: 5, Budget: -1, MaxBytes: 32,
		Retry: func(e *Error) bool {
			mu.Lock()
			asked = append(asked, e.Status)
			mu.Unlock()
			return e.Status == http.StatusNotFound
		}}
	ctx := context.Background()
	if b, err := c.Get(ctx, "late"); err != nil || string(b) != "here" {
		t.Errorf("late: %q, %v", b, err)
	}
	_, err := c.Get(ctx, "unavailable")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.Attempts != 1 || string(e.Body) != "go away\n" {
		t.Errorf("unavailable: err = %v (%+v), want one attempt with the body", err, e)
	}
	if _, err := c.Get(ctx, "big"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: err = %v, want ErrTooLarge", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/late"] != 3 || hits["/unavailable"] != 1 || hits["/big"] != 1 {
		t.Errorf("hits %v", hits)
	}
	if want := []int{404, 404, 503}; !slices.Equal(asked, want) {
		t.Errorf("Retry asked about %v, want %v (never about a body too large)", asked, want)
	}
}
