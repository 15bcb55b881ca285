package lxd

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

// serve starts a devlxd stand-in on a unix socket in a temporary
// directory: a request path maps to a file under root, a directory to its
// _index file, anything else is 404. hook, when not nil, sees each
// request first and answers it by returning true.
func serve(t *testing.T, root string, hook func(w http.ResponseWriter, r *http.Request) bool) (sock string, paths func() []string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "lxd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		if hook != nil && hook(w, r) {
			return
		}
		p := filepath.Join(root, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, "_index")
		}
		b, err := os.ReadFile(p)
		if err != nil || r.Method != http.MethodGet {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Write(b)
	}))
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return sock, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal": {"network_config": "without network-config or nic devices cloud-init's LXD writes its own DHCP-on-the-fallback-NIC config; cloudroot leaves none, and the boot's fallback configuration does the same"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			sock, _ := serve(t, filepath.Join(dir, "socket"), nil)
			d, err := (&Source{SocketPath: sock}).Get(context.Background(), datasource.Env{})
			if err != nil {
				dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
				t.Fatal(err)
			}
			d.Subplatform = strings.ReplaceAll(d.Subplatform, sock, DefaultSocket)
			dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
		})
	}
}

// TestConfiguredSocket: the socket_path setting is used when the Source
// has none.
func TestConfiguredSocket(t *testing.T) {
	sock, paths := serve(t, "testdata/minimal/socket", nil)
	e := datasource.Env{Config: map[string]any{"lxd": map[string]any{"socket_path": sock}}}
	d, err := (&Source{}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "c1" || d.Subplatform != "LXD socket API v. 1.0 ("+sock+")" {
		t.Errorf("got %s %s", d.InstanceID(), d.Subplatform)
	}
	if got := strings.Join(paths(), " "); got != "/1.0/meta-data /1.0/config /1.0/devices" {
		t.Errorf("requests %s", got)
	}
}

func TestRetry500(t *testing.T) {
	var mu sync.Mutex
	n := 0
	sock, _ := serve(t, "testdata/minimal/socket", func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/1.0/meta-data" && n < 2 {
			n++
			http.Error(w, "busy", http.StatusInternalServerError)
			return true
		}
		return false
	})
	if _, err := (&Source{SocketPath: sock}).Get(context.Background(), datasource.Env{}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d 500s served, want 2", n)
	}
}

func TestNotFound(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sock")
	os.WriteFile(file, nil, 0o644)
	for name, p := range map[string]string{"regular file": file, "directory": dir} {
		t.Run(name, func(t *testing.T) {
			_, err := (&Source{SocketPath: p}).Get(context.Background(), datasource.Env{})
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestBroken(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(w http.ResponseWriter, r *http.Request) bool
		want string
	}{
		{"meta-data 403", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "devlxd disabled", http.StatusForbidden)
			return true
		}, "GET /1.0/meta-data: HTTP 403: devlxd disabled"},
		{"bad meta-data", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/1.0/meta-data" {
				w.Write([]byte("[unclosed"))
				return true
			}
			return false
		}, "1.0/meta-data:"},
		{"bad config list", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/1.0/config" {
				w.Write([]byte(`{"not": "a list"}`))
				return true
			}
			return false
		}, "GET /1.0/config: expected a JSON list"},
		{"bad network-config", func(w http.ResponseWriter, r *http.Request) bool {
			switch r.URL.Path {
			case "/1.0/config":
				w.Write([]byte(`["/1.0/config/user.network-config"]`))
			case "/1.0/config/user.network-config":
				w.Write([]byte("- a list"))
			default:
				return false
			}
			return true
		}, "network-config:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, _ := serve(t, "testdata/minimal/socket", tc.hook)
			_, err := (&Source{SocketPath: sock}).Get(context.Background(), datasource.Env{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), sock) {
				t.Fatalf("err = %v, want containing %q and the socket", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken socket is not ErrNotFound: %v", err)
			}
		})
	}
	// A socket nobody listens on.
	sock := dstest.DeadSocket(t)
	if _, err := (&Source{SocketPath: sock}).Get(context.Background(), datasource.Env{}); err == nil || errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("dead socket: err = %v, want an error that is not ErrNotFound", err)
	}
}

// TestConform: the cases every serial/backdoor transport shares, over
// devlxd's socket (every path answered with the same body).
func TestConform(t *testing.T) {
	dstest.ConformTransport(t, dstest.Transport{
		Absent: func(t *testing.T) (datasource.Source, datasource.Env) {
			return &Source{SocketPath: filepath.Join(t.TempDir(), "none")}, datasource.Env{}
		},
		Answering: func(t *testing.T, reply []byte) (datasource.Source, datasource.Env, string) {
			sock, _ := serve(t, "", func(w http.ResponseWriter, r *http.Request) bool { w.Write(reply); return true })
			return &Source{SocketPath: sock}, datasource.Env{}, sock
		},
	})
}

// FuzzParse: arbitrary meta-data and config values never panic, and what
// parses has the meta-data's instance-id.
func FuzzParse(f *testing.F) {
	md, _ := os.ReadFile("testdata/full/socket/1.0/meta-data")
	nc, _ := os.ReadFile("testdata/full/socket/1.0/config/cloud-init.network-config")
	f.Add(md, "#cloud-config\n", string(nc), "x")
	f.Add([]byte("instance-id: 1"), "", "", "")
	f.Fuzz(func(t *testing.T, md []byte, ud, nc, other string) {
		d, err := Parse(Input{Socket: "fuzz", MetaData: md, Config: map[string]string{
			"cloud-init.user-data": ud, "user.network-config": nc, "user.other": other}})
		if err != nil {
			return
		}
		if d.Name != "LXD" || string(d.UserData) != ud || d.DS["config"].(map[string]any)["user.other"] != other {
			t.Fatalf("bad data %+v", d)
		}
	})
}
