package dstest

// The CloudStack password server stand-in and the cases every source that
// asks it shares (CloudStack, Exoscale).

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
)

// PasswordServer is a hook answering DomU_Request requests at path like
// the password server: send_my_password gets reply, saved_password is
// counted in acks. Other requests are left to the tree.
func PasswordServer(t testing.TB, path, reply string, acks *atomic.Int32) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		req := r.Header.Get(pwserver.RequestHeader)
		if req == "" {
			return false
		}
		if r.URL.Path != path {
			t.Errorf("password request to %s, want %s", r.URL.Path, path)
		}
		switch req {
		case pwserver.SendPassword:
			w.Write([]byte(reply))
		case pwserver.SavedPassword:
			acks.Add(1)
			w.Write([]byte(pwserver.SavedPassword))
		default:
			t.Errorf("%s: %s", pwserver.RequestHeader, req)
			http.Error(w, "bad_request", http.StatusBadRequest)
		}
		return true
	}
}

// Port is srv's port.
func Port(t testing.TB, srv *Server) int {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Passwords is a source that asks the password server, for
// ConformPasswords.
type Passwords struct {
	// Source is the source whose metadata URL (when not "") and password
	// port are set on it rather than in the configuration.
	Source func(url string, pwPort int) datasource.Source
	// Env is the source's Env, the network up, with a metadata service at
	// base and the password server on pwPort in its configuration.
	Env func(base string, pwPort int) datasource.Env
	// Tree is a golden case's tree with a new password; Path is where the
	// password server is asked.
	Tree, Path string
}

// ConformPasswords runs the password cases every such source shares:
//   - "own port": the server is asked on the Source's port, never on the
//     metadata port, and the password is acknowledged once;
//   - "server fails" (500), "no server" (refused), "bad_request": the
//     instance is found without a password and nothing is acknowledged.
func ConformPasswords(t *testing.T, p Passwords) {
	t.Helper()
	t.Run("own port", func(t *testing.T) {
		var acks atomic.Int32
		pw := Serve(t, "", PasswordServer(t, p.Path, "pw", &acks))
		md := Serve(t, p.Tree, func(w http.ResponseWriter, r *http.Request) bool {
			if r.Header.Get(pwserver.RequestHeader) != "" {
				t.Errorf("password request on the metadata port")
			}
			return false
		})
		d, err := p.Source(md.URL, Port(t, pw)).Get(context.Background(), datasource.Env{NetworkUp: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Config["password"] != "pw" || acks.Load() != 1 {
			t.Errorf("config %v, %d acks", d.Config, acks.Load())
		}
	})
	closed := func(t testing.TB) int {
		u, _ := url.Parse(ClosedURL(t))
		n, _ := strconv.Atoi(u.Port())
		return n
	}
	for _, tc := range []struct {
		name string
		hook func(t *testing.T, acks *atomic.Int32) func(w http.ResponseWriter, r *http.Request) bool
		port func(t testing.TB, srv *Server) int
	}{
		{"server fails", func(*testing.T, *atomic.Int32) func(w http.ResponseWriter, r *http.Request) bool {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if r.Header.Get(pwserver.RequestHeader) != "" {
					http.Error(w, "", http.StatusInternalServerError)
					return true
				}
				return false
			}
		}, Port},
		{"no server", func(*testing.T, *atomic.Int32) func(w http.ResponseWriter, r *http.Request) bool { return nil },
			func(t testing.TB, _ *Server) int { return closed(t) }},
		{"bad_request", func(t *testing.T, acks *atomic.Int32) func(w http.ResponseWriter, r *http.Request) bool {
			return PasswordServer(t, p.Path, "bad_request\n", acks)
		}, Port},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var acks atomic.Int32
			srv := Serve(t, p.Tree, tc.hook(t, &acks))
			d, err := p.Source("", 0).Get(context.Background(), p.Env(srv.URL, tc.port(t, srv)))
			if err != nil {
				t.Fatal(err)
			}
			if d.Config != nil || acks.Load() != 0 {
				t.Errorf("config %v, %d acks without a password", d.Config, acks.Load())
			}
		})
	}
}

// FuzzPassword is the fuzz body of a password-server source: parse (the
// source's ParsePassword) reads a reply as a new password or none (never
// the "saved" answer, never padded), and build (its Build of meta-data with
// instance-id id and password pw) puts a password, and only one, into
// Data.Config.
func FuzzPassword(f *testing.F, parse func([]byte) (string, bool), build func(id, pw string) (*datasource.Data, error)) {
	f.Add([]byte("s3cr3t\n"), "id")
	f.Add([]byte(pwserver.SavedPassword), "id")
	f.Add([]byte(" \n"), "")
	f.Fuzz(func(t *testing.T, reply []byte, id string) {
		pw, ok := parse(reply)
		if ok != (pw != "") || pw == pwserver.SavedPassword || strings.TrimSpace(pw) != pw {
			t.Fatalf("ParsePassword(%q) = %q, %v", reply, pw, ok)
		}
		d, err := build(id, pw)
		if err != nil {
			if id != "" {
				t.Fatal(err)
			}
			return
		}
		if (d.Config != nil) != ok || (ok && d.Config["password"] != pw) {
			t.Fatalf("config %v for password %q", d.Config, pw)
		}
		if _, err := json.Marshal(ViewOf(d)); err != nil {
			t.Fatal(err)
		}
	})
}
