package ec2

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

// TestRedirectOffHostWithBootClient: the initramfs hands datasources its
// own *http.Client (Env.HTTP, Go's default redirect rule). A 302 from the
// IMDS to another host (127.0.0.2) is still not followed: that host never
// sees the IMDSv2 token, and its body never becomes user-data.
func TestRedirectOffHostWithBootClient(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.URL.Path+" token="+r.Header.Get(TokenHeader))
		mu.Unlock()
		w.Write([]byte("#!/bin/sh\necho attacker\n"))
	}))
	other.Listener.Close()
	other.Listener = l
	other.Start()
	defer other.Close()

	dir := filepath.Join("testdata", "aws-imdsv2")
	var spec caseSpec
	dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
	tokenDance := imdsHook(t, spec.IMDS)
	srv := dstest.Serve(t, filepath.Join(dir, "tree"), func(w http.ResponseWriter, r *http.Request) bool {
		if tokenDance(w, r) {
			return true
		}
		if strings.HasSuffix(r.URL.Path, "/user-data") {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
			return true
		}
		return false
	})
	e := env(spec.DMI, srv.URL, nil)
	e.HTTP = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	d, err := (&Source{}).Get(context.Background(), e)
	if err == nil && strings.Contains(string(d.UserData), "attacker") {
		t.Errorf("the other host's body became user-data: %q", d.UserData)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range leaked {
		t.Errorf("the other host was reached: %s", l)
	}
}
