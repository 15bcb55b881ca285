package imds

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestRequestBody: a request body is sent whole with every attempt,
// retries included.
func TestRequestBody(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+string(b))
		n := len(got)
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	c := &Client{BaseURLs: []string{srv.URL}, Retries: 5, Backoff: fastBackoff(), Budget: -1}
	body, err := c.Do(context.Background(), Request{Method: http.MethodPost, Path: "/form", Body: []byte("a=1&b=2")})
	if err != nil || string(body) != "ok" {
		t.Fatalf("body %q, err %v", body, err)
	}
	if len(got) != 3 {
		t.Fatalf("%d attempts, want 3", len(got))
	}
	for _, g := range got {
		if g != "POST a=1&b=2" {
			t.Errorf("attempt sent %q", g)
		}
	}
}
