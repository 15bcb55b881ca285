package pwserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

func TestPortAndParse(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		over int
		want int
	}{
		{nil, 0, 8080}, {map[string]any{"password_server_port": 9090}, 0, 9090},
		{map[string]any{"password_server_port": "7070"}, 1, 7070}, {map[string]any{"password_server_port": 99999}, 6060, 6060},
		{map[string]any{"password_server_port": 5050.0}, 0, 5050},
	} {
		if got := Port(tc.cfg, tc.over, 8080); got != tc.want {
			t.Errorf("Port(%v, %d) = %d, want %d", tc.cfg, tc.over, got, tc.want)
		}
	}
	for in, want := range map[string]string{"secret\n": "secret", "": "", "saved_password": "", " bad_request\n": ""} {
		if got, ok := Parse([]byte(in)); got != want || ok != (want != "") {
			t.Errorf("Parse(%q) = %q, %v", in, got, ok)
		}
	}
	if u, err := URL("http://10.1.1.1/latest/", 8080, "/"); err != nil || u != "http://10.1.1.1:8080/" {
		t.Errorf("URL = %q, %v", u, err)
	}
}

// server is a password server on 127.0.0.1: reply answers send_my_password
// (after failFirst 500s), saved_password is recorded.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func newServer(t *testing.T, reply string, failFirst int) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Header.Get(RequestHeader))
		n := len(s.requests)
		s.mu.Unlock()
		if n <= failFirst {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		switch r.Header.Get(RequestHeader) {
		case SendPassword:
			w.Write([]byte(reply))
		case SavedPassword:
			w.Write([]byte(SavedPassword))
		default:
			http.Error(w, BadRequest, http.StatusBadRequest)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func TestPassword(t *testing.T) {
	md := &imds.Client{Timeout: time.Second, Backoff: imds.Backoff{Initial: time.Millisecond, Max: time.Millisecond}}
	for _, tc := range []struct {
		name      string
		reply     string
		failFirst int
		want      string
		wantErr   string
		requests  []string
	}{
		{"new password", "s3cr3t\n", 0, "s3cr3t", "", []string{SendPassword, SavedPassword}},
		{"saved", SavedPassword, 0, "", "", []string{SendPassword}},
		{"none", "", 0, "", "", []string{SendPassword}},
		{"bad_request", BadRequest + "\n", 0, "", BadRequest, []string{SendPassword}},
		{"recovers within the tries", "s3cr3t", Tries - 1, "s3cr3t", "", []string{SendPassword, SendPassword, SendPassword, SavedPassword}},
		{"fails every try", "s3cr3t", Tries, "", "status 500", []string{SendPassword, SendPassword, SendPassword}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.reply, tc.failFirst)
			got, err := Password(context.Background(), md, srv.URL+"/")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), srv.URL) {
					t.Errorf("err = %v, want %q and the URL", err, tc.wantErr)
				}
				if tc.wantErr == BadRequest && !errors.Is(err, ErrBadRequest) {
					t.Errorf("err = %v, want ErrBadRequest", err)
				}
			} else if err != nil || got != tc.want {
				t.Errorf("Password = %q, %v; want %q", got, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the password is in the error: %v", err)
			}
			if s := srv.seen(); strings.Join(s, ",") != strings.Join(tc.requests, ",") {
				t.Errorf("requests %q, want %q", s, tc.requests)
			}
		})
	}
}

// TestPasswordCancelled: the exchange is bounded by the context.
func TestPasswordCancelled(t *testing.T) {
	srv := newServer(t, "pw", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Password(ctx, nil, srv.URL+"/"); err == nil {
		t.Error("Password with a cancelled context succeeded")
	}
}
