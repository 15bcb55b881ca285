// Package dstest holds the datasources' test helpers: a fake metadata
// service serving a directory tree on 127.0.0.1, golden files of Data, the
// negative cases every network source shares (negative.go) and the checks
// of sources that try several metadata URLs (urls.go).
//
// Tree layout: a request path maps to a file under Root. A directory is
// answered with its `_index` file when it has one (EC2's `public-keys/`
// listing, GCE's `?recursive=true` JSON), else with a listing of its
// entries, one a line, directories with a trailing slash (EC2 style). The
// query string is ignored. Anything else is 404.
package dstest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

// Server is a fake metadata service.
type Server struct {
	*httptest.Server
	// Root is the tree served.
	Root string

	mu   sync.Mutex
	hook func(w http.ResponseWriter, r *http.Request) bool
	reqs []Request
}

// Request is one request the server saw.
type Request struct {
	Method, Path, Query string
	Header              http.Header
}

// Serve starts a server for root (a directory; "" serves nothing: every
// path is 404). hook, when not nil, sees each request first and answers it
// by returning true (token dance, header checks, errors, slow replies).
func Serve(t testing.TB, root string, hook func(w http.ResponseWriter, r *http.Request) bool) *Server {
	t.Helper()
	s := &Server{Root: root, hook: hook}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()})
	s.mu.Unlock()
	if s.hook != nil && s.hook(w, r) {
		return
	}
	if r.Method != http.MethodGet || s.Root == "" {
		http.NotFound(w, r)
		return
	}
	p := filepath.Join(s.Root, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
	fi, err := os.Stat(p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if !fi.IsDir() {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(b)
		return
	}
	if b, err := os.ReadFile(filepath.Join(p, "_index")); err == nil {
		w.Write(b)
		return
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var lines []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		lines = append(lines, n)
	}
	sort.Strings(lines)
	w.Write([]byte(strings.Join(lines, "\n")))
}

// Count is how many requests s saw for path with method ("" for any).
func (s *Server) Count(method, path string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Path == path && (method == "" || r.Method == method) {
			n++
		}
	}
	return n
}

// Status is a hook that answers every request with code (an empty
// body).
func Status(code int) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "", code)
		return true
	}
}

// Answer is a hook that answers the requests whose path ends in suffix
// with code and body, and passes the others on.
func Answer(suffix string, code int, body string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, suffix) {
			return false
		}
		w.WriteHeader(code)
		w.Write([]byte(body))
		return true
	}
}

// InFlight measures how many requests a server works on at once.
type InFlight struct {
	mu       sync.Mutex
	in, most int
}

// Hook is a hook that holds each request r for which match(r) is true
// (every request when match is nil) for hold, then hands every request
// to next (nil: the tree).
func (f *InFlight) Hook(match func(r *http.Request) bool, hold time.Duration, next func(w http.ResponseWriter, r *http.Request) bool) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if match == nil || match(r) {
			f.mu.Lock()
			f.in++
			f.most = max(f.most, f.in)
			f.mu.Unlock()
			time.Sleep(hold)
			f.mu.Lock()
			f.in--
			f.mu.Unlock()
		}
		return next != nil && next(w, r)
	}
}

// Most is the most requests held at once so far.
func (f *InFlight) Most() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.most
}

// Hang is a hook that never answers: each request is held until the
// client gives up (or a minute passes), as by a service that hangs.
func Hang(w http.ResponseWriter, r *http.Request) bool {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
	return true
}

// Late is a hook that answers every request d late, as a service that is
// slow but working: it waits d (less if the client gives up), then lets
// next (when not nil) or the tree answer.
func Late(d time.Duration, next func(w http.ResponseWriter, r *http.Request) bool) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
			return true
		case <-time.After(d):
		}
		return next != nil && next(w, r)
	}
}

// ClosedURL is the URL of a server that has gone: connections to it are
// refused (an absent metadata service).
func ClosedURL(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return u
}

// View is Data as want.json shows it: byte fields as text when they are
// UTF-8, derived values (instance-id, hostname, cloud_id) included.
type View struct {
	Name             string         `json:"name"`
	Platform         string         `json:"platform"`
	Subplatform      string         `json:"subplatform"`
	CloudName        string         `json:"cloud_name"`
	CloudID          string         `json:"cloud_id"`
	Mode             string         `json:"mode"`
	InstanceID       string         `json:"instance_id"`
	LocalHostname    string         `json:"local_hostname"`
	AvailabilityZone string         `json:"availability_zone,omitempty"`
	Region           string         `json:"region,omitempty"`
	PublicKeys       []string       `json:"public_keys,omitempty"`
	MetaData         map[string]any `json:"meta_data"`
	UserData         any            `json:"user_data,omitempty"`
	VendorData       any            `json:"vendor_data,omitempty"`
	VendorData2      any            `json:"vendor_data2,omitempty"`
	NetworkConfig    map[string]any `json:"network_config,omitempty"`
	Config           map[string]any `json:"config,omitempty"`
	Files            map[string]any `json:"files,omitempty"`
	DS               map[string]any `json:"ds,omitempty"`
	// What the boot does with the answer besides reading it.
	Description          string              `json:"description"`
	FileModes            map[string]string   `json:"file_modes,omitempty"`
	FilesEveryBoot       bool                `json:"files_every_boot,omitempty"`
	FileOps              []datasource.FileOp `json:"file_ops,omitempty"`
	NetworkUpdateEvents  []string            `json:"network_update_events,omitempty"`
	NetworkConfigSources []string            `json:"network_config_sources,omitempty"`
}

func text(b []byte) any {
	if b == nil {
		return nil
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return b // base64 in JSON
}

// ViewOf builds the golden view of d.
func ViewOf(d *datasource.Data) View {
	v := View{
		Name: d.Name, Platform: d.Platform, Subplatform: d.Subplatform, CloudName: d.CloudName,
		CloudID: d.CloudID(), Mode: d.Mode, InstanceID: d.InstanceID(), LocalHostname: d.LocalHostname(),
		AvailabilityZone: d.AvailabilityZone, Region: d.Region, PublicKeys: d.PublicKeys,
		MetaData: d.MetaData, UserData: text(d.UserData), VendorData: text(d.VendorData),
		VendorData2: text(d.VendorData2), NetworkConfig: d.NetworkConfig, Config: d.Config, DS: d.DS,
		Description: d.Description(), FilesEveryBoot: d.FilesEveryBoot, FileOps: d.FileOps,
		NetworkUpdateEvents: d.NetworkUpdateEvents, NetworkConfigSources: d.NetworkConfigSources,
	}
	if len(d.FileModes) > 0 {
		v.FileModes = map[string]string{}
		for k, m := range d.FileModes {
			v.FileModes[k] = fmt.Sprintf("%04o", m)
		}
	}
	if len(d.Files) > 0 {
		v.Files = map[string]any{}
		for k, b := range d.Files {
			v.Files[k] = text(b)
		}
	}
	return v
}

// Golden compares d's view with the JSON file want (rewriting it under
// -update: pkg/internal/golden). baseURL, when not "", is replaced by "BASE" so the file
// does not depend on the test server's port.
func Golden(t testing.TB, want string, d *datasource.Data, baseURL string) {
	t.Helper()
	b, err := json.MarshalIndent(ViewOf(d), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := string(b) + "\n"
	if baseURL != "" {
		got = strings.ReplaceAll(got, baseURL, "BASE")
	}
	golden.CheckString(t, want, got)
}

// ReadJSON decodes the JSON file name (a case's case.json) into v.
func ReadJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// Gunzip is the content of the gzipped file name (a disk image in
// testdata).
func Gunzip(t testing.TB, name string) []byte {
	t.Helper()
	return testtree.Gunzip(t, name)
}

// DeadSocket is the path of a unix socket that nobody listens on (a
// service that has gone, leaving its socket behind). It is in a short
// directory of its own (unix socket paths are short), removed when the
// test ends.
func DeadSocket(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dstest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	return sock
}

// Cases lists the golden case directories under dir (testdata), sorted.
func Cases(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatalf("no cases in %s", dir)
	}
	return out
}
