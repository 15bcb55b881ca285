package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetries(t *testing.T) {
	var n atomic.Int32
	codes := map[string]int{"/500": 500, "/404": 404, "/429": 429}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path == "/flaky" && n.Load() < 3 {
			http.Error(w, "", 503)
			return
		}
		if c, ok := codes[r.URL.Path]; ok {
			http.Error(w, "", c)
			return
		}
		if r.Header.Get("X-A") != "1" || r.Header.Get("X-B") != "2" {
			http.Error(w, "headers", 400)
			return
		}
		w.Write([]byte(strings.Repeat("x", 10)))
	}))
	defer srv.Close()
	c := &Client{Header: http.Header{"X-A": {"1"}}, Backoff: time.Millisecond}
	for _, tc := range []struct {
		path     string
		code     int
		attempts int32
	}{
		{"/500", 500, 3},
		{"/429", 429, 3},
		{"/404", 404, 1},
		{"/flaky", 0, 3},
	} {
		n.Store(0)
		_, err := c.Do(context.Background(), http.MethodGet, srv.URL+tc.path, http.Header{"X-B": {"2"}})
		if Status(err) != tc.code || n.Load() != tc.attempts {
			t.Errorf("%s: err %v (status %d), %d attempts; want status %d, %d attempts", tc.path, err, Status(err), n.Load(), tc.code, tc.attempts)
		}
		if err != nil && !strings.Contains(err.Error(), srv.URL+tc.path) {
			t.Errorf("%s: error does not name the URL: %v", tc.path, err)
		}
	}
	small := &Client{Header: http.Header{"X-A": {"1"}}, MaxBytes: 5}
	if _, err := small.Do(context.Background(), http.MethodGet, srv.URL+"/ok", http.Header{"X-B": {"2"}}); err == nil || !strings.Contains(err.Error(), "larger than 5") {
		t.Errorf("size limit: %v", err)
	}
	bad := &Client{Check: func(*http.Response) error { return errors.New("not flavoured") }}
	n.Store(0)
	if _, err := bad.Get(context.Background(), srv.URL+"/500"); err == nil || n.Load() != 1 {
		t.Errorf("check failure retried or ignored: %v, %d attempts", err, n.Load())
	}
}

func TestJoin(t *testing.T) {
	for _, tc := range [][]string{
		{"http://h/", "http://h"},
		{"http://h/computeMetadata/v1/|instance/id", "http://h/computeMetadata/v1/instance/id"},
		{"http://h|/2009-04-04/|meta-data/", "http://h/2009-04-04/meta-data/"},
		{"http://h||x", "http://h/x"},
	} {
		parts := strings.Split(tc[0], "|")
		if got := Join(parts[0], parts[1:]...); got != tc[1] {
			t.Errorf("Join(%q) = %q, want %q", parts, got, tc[1])
		}
	}
}

func TestAbsent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: errors.New("connection refused")}, true},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), true},
		{&StatusError{Code: 404}, false},
		{errors.New("bad JSON"), false},
	} {
		if got := Absent(tc.err); got != tc.want {
			t.Errorf("Absent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
