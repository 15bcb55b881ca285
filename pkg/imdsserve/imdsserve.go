// Package imdsserve is a metadata-service simulator: it serves a directory
// tree laid out like the datasources' golden trees
// (pkg/datasource/<cloud>/testdata/<case>/tree/) as the EC2 IMDS, the
// OpenStack Nova metadata service, the GCE metadata server or Azure's IMDS
// and wireserver would, for
// tests and for trying a build against a fake cloud on a workstation.
//
// Tree layout (shared with pkg/datasource/internal/dstest): a request path
// maps to a file under the tree. A directory is answered with its `_index`
// file when it has one (EC2's `public-keys/` listing, OpenStack's version
// listing, GCE's `?recursive=true` JSON), else with a listing of its
// entries, one a line, directories with a trailing slash. `_index` itself
// is never served by name. A file asked for with a trailing slash is 404.
//
// Per cloud:
//
//   - ec2: PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds
//     (1-21600) returns a token; a GET carrying X-aws-ec2-metadata-token
//     must carry a valid, unexpired one (else 401), and with RequireToken
//     every GET must (IMDSv2 only). The first path element is an API
//     version: a directory of the tree by that name, else `latest` means
//     the newest dated directory, and a tree with only `latest/` answers
//     for every dated version. `/` lists the versions and `latest`.
//   - openstack: `/openstack` and `/openstack/` list the versions (the
//     `openstack/_index` file, else the dated directories and `latest`);
//     `/openstack/latest/...` falls back to the newest dated directory.
//     Other paths are the EC2-compatible tree (no tokens).
//   - gce: every request must carry Metadata-Flavor: Google (else 403) and
//     every reply carries it. `?recursive=true` on a directory answers JSON:
//     its `_index` (the attributes directories of the golden trees), else
//     the subtree as an object (files as strings). A key inside a
//     directory that only has an `_index` JSON object is answered from it
//     (instance/attributes/user-data), and so is the directory's listing.
//   - azure: IMDS and the wireserver (azure.go): Metadata: true and a
//     known api-version required; /metadata/instance and the paths below
//     it from the tree's metadata/instance document; the wireserver's goal
//     state, and health reports recorded (HealthReports).
//
// Only GET and HEAD are served (and the EC2 token PUT, the wireserver's
// health POST). Every request is
// recorded (Requests) and logged to Options.Log as one line: method, path
// with query, status.
//
// Fleets: with PerClient, each client address has its own tree,
// Dir/<client IP>/ (e.g. Dir/127.0.3.7/), as a cloud tells each instance
// its own identity by the address it asks from; a client without a tree
// is answered 404, and EC2 tokens are per client. Faults (faults.go) make
// the service flaky: a share of requests answered 5xx, a share delayed.
package imdsserve

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StatusClientClosed is the status recorded for a request whose client
// went away before it was answered (nginx's 499).
const StatusClientClosed = 499

// Clouds the simulator knows.
const (
	CloudEC2       = "ec2"
	CloudOpenStack = "openstack"
	CloudGCE       = "gce"
)

// Clouds lists the --cloud values.
func Clouds() []string { return []string{CloudEC2, CloudOpenStack, CloudGCE, CloudAzure} }

// EC2 and GCE headers.
const (
	TokenHeader    = "X-aws-ec2-metadata-token"
	TokenTTLHeader = "X-aws-ec2-metadata-token-ttl-seconds"
	// MaxTokenTTL is the longest token lifetime IMDS grants, in seconds.
	MaxTokenTTL = 21600
	// TokenPath is where the IMDSv2 token is PUT.
	TokenPath = "/latest/api/token"

	FlavorHeader = "Metadata-Flavor"
	Flavor       = "Google"
)

// Options configure a Server.
type Options struct {
	// Cloud is CloudEC2, CloudOpenStack, CloudGCE or CloudAzure.
	Cloud string
	// Dir is the tree served.
	Dir string
	// RequireToken (ec2): every GET needs an IMDSv2 token.
	RequireToken bool
	// APIVersions (azure) are the api-version values IMDS accepts; nil
	// means AzureAPIVersions.
	APIVersions []string
	// Log receives one line per request; nil discards.
	Log io.Writer
	// Now is the clock token expiry is checked against; nil: time.Now.
	Now func() time.Time
	// PerClient serves each client address its own tree, Dir/<IP>/.
	PerClient bool
	// Faults are injected before requests are served (none when zero).
	Faults Faults
}

// Request is one request the server answered.
type Request struct {
	Time   time.Time
	Method string
	// Path is the URL path, Query the raw query.
	Path, Query string
	// Client is the IP address the request came from.
	Client string
	Header http.Header
	Status int
}

// Server is the simulator, an http.Handler.
type Server struct {
	opts Options
	root *os.Root
	fsys fs.FS

	// handler serves a request (dispatch, behind the faults if any).
	handler http.Handler
	faults  *FaultHandler

	mu       sync.Mutex
	tokens   map[string]time.Time
	reqs     []Request
	health   []HealthReport
	children map[string]*Server // PerClient: a tree per client IP
}

// New opens the tree and returns a Server. Close releases the tree.
func New(o Options) (*Server, error) {
	if !slices.Contains(Clouds(), o.Cloud) {
		return nil, fmt.Errorf("imdsserve: unknown cloud %q (want one of %s)", o.Cloud, strings.Join(Clouds(), ", "))
	}
	if o.Dir == "" {
		return nil, errors.New("imdsserve: no tree directory")
	}
	r, err := os.OpenRoot(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("imdsserve: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := o.Faults.Validate(); err != nil {
		r.Close()
		return nil, fmt.Errorf("imdsserve: %w", err)
	}
	s := &Server{opts: o, root: r, fsys: r.FS(), tokens: map[string]time.Time{}, children: map[string]*Server{}}
	s.handler = http.HandlerFunc(s.dispatch)
	if o.Faults.Enabled() {
		s.faults = WithFaults(s.handler, o.Faults)
		s.handler = s.faults
	}
	return s, nil
}

// FaultStats is what the injected faults did so far (zero without Faults).
func (s *Server) FaultStats() FaultStats {
	if s.faults == nil {
		return FaultStats{}
	}
	return s.faults.Stats()
}

// clientIP is the address a request came from, without the port.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// child is the server of one client's tree (PerClient), made on first use;
// nil when the client has no tree.
func (s *Server) child(ip string) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.children[ip]; ok {
		return c
	}
	var c *Server
	if fi, err := fs.Stat(s.fsys, ip); err == nil && fi.IsDir() && path.Base(ip) == ip && ip != "." && ip != ".." {
		sub, err := fs.Sub(s.fsys, ip)
		if err == nil {
			c = &Server{opts: s.opts, fsys: sub, tokens: map[string]time.Time{}}
		}
	}
	s.children[ip] = c
	return c
}

// Close releases the tree.
func (s *Server) Close() error { return s.root.Close() }

// Requests returns a copy of the requests answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Count is the number of requests with this method and path so far.
func (s *Server) Count(method, p string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == p {
			n++
		}
	}
	return n
}

// Log is one line per request answered so far, as written to Options.Log.
func (s *Server) Log() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		b.WriteString(logLine(r))
		b.WriteByte('\n')
	}
	return b.String()
}

func logLine(r Request) string {
	u := r.Path
	if r.Query != "" {
		u += "?" + r.Query
	}
	return fmt.Sprintf("%s imds: %s %s %d", r.Time.Format("15:04:05.000"), r.Method, u, r.Status)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	s.handler.ServeHTTP(sw, r)
	switch {
	case sw.status == 0 && r.Context().Err() != nil:
		sw.status = StatusClientClosed
	case sw.status == 0:
		sw.status = http.StatusOK
	}
	req := Request{Time: s.opts.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Client: clientIP(r), Header: r.Header.Clone(), Status: sw.status}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if s.opts.Log != nil {
		fmt.Fprintln(s.opts.Log, logLine(req))
	}
}

// dispatch serves r from the tree (the client's own with PerClient).
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if s.opts.PerClient {
		c := s.child(clientIP(r))
		if c == nil {
			notFound(w)
			return
		}
		c.serve(w, r)
		return
	}
	s.serve(w, r)
}

// serve answers r as the configured cloud does.
func (s *Server) serve(sw http.ResponseWriter, r *http.Request) {
	switch s.opts.Cloud {
	case CloudEC2:
		s.serveEC2(sw, r)
	case CloudOpenStack:
		s.serveOpenStack(sw, r)
	case CloudGCE:
		s.serveGCE(sw, r)
	case CloudAzure:
		s.serveAzure(sw, r)
	}
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

func notFound(w http.ResponseWriter) { text(w, http.StatusNotFound, "Not Found\n") }

func readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	text(w, http.StatusMethodNotAllowed, "Method Not Allowed\n")
	return false
}

// --- the tree ---

var datedVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })

// segments splits a URL path into clean elements; ok is false for a path
// that tries to leave the tree or names an `_index` file.
func segments(p string) (segs []string, ok bool) {
	for _, e := range strings.Split(p, "/") {
		switch e {
		case "", ".":
			continue
		case "..", "_index":
			return nil, false
		}
		segs = append(segs, e)
	}
	return segs, true
}

func rel(segs []string) string {
	if p := path.Join(segs...); p != "" {
		return p
	}
	return "."
}

// versions lists the tree's directories under dir that are dated API
// versions, oldest first, and whether dir has a `latest` directory.
func (s *Server) versions(dir string) (dated []string, latest bool) {
	ents, err := fs.ReadDir(s.fsys, dir)
	if err != nil {
		return nil, false
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		switch n := e.Name(); {
		case n == "latest":
			latest = true
		case datedVersion().MatchString(n):
			dated = append(dated, n)
		}
	}
	sort.Strings(dated)
	return dated, latest
}

// resolveVersion maps an API version asked for under dir to the tree's
// directory for it ("" when none answers).
func (s *Server) resolveVersion(dir, v string) string {
	dated, latest := s.versions(dir)
	switch {
	case v == "latest" && latest, slices.Contains(dated, v):
		return v
	case v == "latest" && len(dated) > 0:
		return dated[len(dated)-1]
	case datedVersion().MatchString(v) && len(dated) == 0 && latest:
		return "latest"
	}
	return ""
}

// versionListing is the EC2/OpenStack version list: the dated versions and
// latest, one a line, without trailing slashes.
func (s *Server) versionListing(dir string) string {
	dated, _ := s.versions(dir)
	return strings.Join(append(dated, "latest"), "\n")
}

// serveTree answers a GET for the tree path segs (URL path urlPath, which
// says with its trailing slash whether a directory was asked for).
func (s *Server) serveTree(w http.ResponseWriter, urlPath string, segs []string) {
	p := rel(segs)
	fi, err := fs.Stat(s.fsys, p)
	if err != nil {
		notFound(w)
		return
	}
	if !fi.IsDir() {
		if strings.HasSuffix(urlPath, "/") {
			notFound(w)
			return
		}
		b, err := fs.ReadFile(s.fsys, p)
		if err != nil {
			text(w, http.StatusInternalServerError, err.Error()+"\n")
			return
		}
		text(w, http.StatusOK, string(b))
		return
	}
	if b, err := fs.ReadFile(s.fsys, path.Join(p, "_index")); err == nil {
		text(w, http.StatusOK, string(b))
		return
	}
	l, err := s.listing(p)
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	text(w, http.StatusOK, strings.Join(l, "\n"))
}

// listing is a directory's entries, directories with a trailing slash.
func (s *Server) listing(p string) ([]string, error) {
	ents, err := fs.ReadDir(s.fsys, p)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, e := range ents {
		n := e.Name()
		if n == "_index" {
			continue
		}
		if e.IsDir() {
			n += "/"
		}
		lines = append(lines, n)
	}
	sort.Strings(lines)
	return lines, nil
}

// --- EC2 ---

func (s *Server) serveEC2(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "EC2ws")
	if r.Method == http.MethodPut {
		s.putToken(w, r)
		return
	}
	if !readOnly(w, r) {
		return
	}
	if tok := r.Header.Get(TokenHeader); tok != "" || s.opts.RequireToken {
		if !s.validToken(tok) {
			text(w, http.StatusUnauthorized, "Unauthorized\n")
			return
		}
	}
	s.serveEC2Tree(w, r.URL.Path, "")
}

// serveEC2Tree serves the EC2-style tree under the tree directory base.
func (s *Server) serveEC2Tree(w http.ResponseWriter, urlPath, base string) {
	segs, ok := segments(urlPath)
	if !ok {
		notFound(w)
		return
	}
	if len(segs) == 0 {
		text(w, http.StatusOK, s.versionListing(rel([]string{base})))
		return
	}
	v := s.resolveVersion(rel([]string{base}), segs[0])
	if v == "" {
		notFound(w)
		return
	}
	segs[0] = v
	if base != "" {
		segs = append([]string{base}, segs...)
	}
	s.serveTree(w, urlPath, segs)
}

func (s *Server) putToken(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != TokenPath:
		w.Header().Set("Allow", "GET, HEAD")
		text(w, http.StatusMethodNotAllowed, "Method Not Allowed\n")
		return
	case r.Header.Get("X-Forwarded-For") != "":
		// IMDS refuses token requests that went through a proxy.
		text(w, http.StatusForbidden, "Forbidden\n")
		return
	}
	ttl, err := strconv.Atoi(strings.TrimSpace(r.Header.Get(TokenTTLHeader)))
	if err != nil || ttl < 1 || ttl > MaxTokenTTL {
		text(w, http.StatusBadRequest, "Bad Request\n")
		return
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	s.mu.Lock()
	s.tokens[tok] = s.opts.Now().Add(time.Duration(ttl) * time.Second)
	s.mu.Unlock()
	w.Header().Set(TokenTTLHeader, strconv.Itoa(ttl))
	text(w, http.StatusOK, tok)
}

func (s *Server) validToken(tok string) bool {
	if tok == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[tok]
	return ok && s.opts.Now().Before(exp)
}

// --- OpenStack ---

func (s *Server) serveOpenStack(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	segs, ok := segments(r.URL.Path)
	if !ok {
		notFound(w)
		return
	}
	if len(segs) == 0 || segs[0] != "openstack" {
		s.serveEC2Tree(w, r.URL.Path, "")
		return
	}
	if len(segs) == 1 {
		if b, err := fs.ReadFile(s.fsys, "openstack/_index"); err == nil {
			text(w, http.StatusOK, string(b))
			return
		}
		if fi, err := fs.Stat(s.fsys, "openstack"); err != nil || !fi.IsDir() {
			notFound(w)
			return
		}
		text(w, http.StatusOK, s.versionListing("openstack"))
		return
	}
	v := s.resolveVersion("openstack", segs[1])
	if v == "" {
		// Not a version: content/NNNN and the like.
		s.serveTree(w, r.URL.Path, segs)
		return
	}
	segs[1] = v
	s.serveTree(w, r.URL.Path, segs)
}

// --- GCE ---

func (s *Server) serveGCE(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(FlavorHeader, Flavor)
	w.Header().Set("Server", "Metadata Server for VM")
	if !readOnly(w, r) {
		return
	}
	if r.Header.Get(FlavorHeader) != Flavor || r.Header.Get("X-Forwarded-For") != "" {
		text(w, http.StatusForbidden, "Forbidden: missing or wrong "+FlavorHeader+" header\n")
		return
	}
	segs, ok := segments(r.URL.Path)
	if !ok {
		notFound(w)
		return
	}
	q := r.URL.Query()
	recursive := strings.EqualFold(q.Get("recursive"), "true")
	p := rel(segs)
	fi, err := fs.Stat(s.fsys, p)
	if err != nil {
		s.serveGCEIndexKey(w, r.URL.Path, segs, q.Get("alt") == "json")
		return
	}
	if fi.IsDir() && recursive {
		v, err := s.gceJSON(p)
		if err != nil {
			text(w, http.StatusInternalServerError, err.Error()+"\n")
			return
		}
		writeJSON(w, v)
		return
	}
	if fi.IsDir() {
		if b, err := fs.ReadFile(s.fsys, path.Join(p, "_index")); err == nil {
			if obj, ok := jsonObject(b); ok {
				text(w, http.StatusOK, keyListing(obj))
				return
			}
		}
		l, err := s.listing(p)
		if err != nil {
			text(w, http.StatusInternalServerError, err.Error()+"\n")
			return
		}
		text(w, http.StatusOK, strings.Join(l, "\n")+"\n")
		return
	}
	if strings.HasSuffix(r.URL.Path, "/") {
		notFound(w)
		return
	}
	b, err := fs.ReadFile(s.fsys, p)
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	if q.Get("alt") == "json" {
		writeJSON(w, string(b))
		return
	}
	text(w, http.StatusOK, string(b))
}

// serveGCEIndexKey answers a path below a directory whose `_index` is a
// JSON object, from that object.
func (s *Server) serveGCEIndexKey(w http.ResponseWriter, urlPath string, segs []string, alt bool) {
	for i := len(segs) - 1; i >= 0; i-- {
		b, err := fs.ReadFile(s.fsys, path.Join(rel(segs[:i]), "_index"))
		if err != nil {
			continue
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			break
		}
		for _, k := range segs[i:] {
			obj, ok := v.(map[string]any)
			if !ok {
				notFound(w)
				return
			}
			if v, ok = obj[k]; !ok {
				notFound(w)
				return
			}
		}
		switch v := v.(type) {
		case string:
			if alt {
				writeJSON(w, v)
			} else {
				text(w, http.StatusOK, v)
			}
		case map[string]any:
			text(w, http.StatusOK, keyListing(v))
		default:
			writeJSON(w, v)
		}
		return
	}
	notFound(w)
}

func jsonObject(b []byte) (map[string]any, bool) {
	var obj map[string]any
	if json.Unmarshal(b, &obj) != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

func keyListing(obj map[string]any) string {
	keys := make([]string, 0, len(obj))
	for k, v := range obj {
		if _, ok := v.(map[string]any); ok {
			k += "/"
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, "\n") + "\n"
}

// gceJSON is the recursive view of a directory: its `_index` JSON, else an
// object of its entries.
func (s *Server) gceJSON(p string) (any, error) {
	if b, err := fs.ReadFile(s.fsys, path.Join(p, "_index")); err == nil {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s/_index: %w", p, err)
		}
		return v, nil
	}
	ents, err := fs.ReadDir(s.fsys, p)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range ents {
		n := e.Name()
		if n == "_index" {
			continue
		}
		if e.IsDir() {
			v, err := s.gceJSON(path.Join(p, n))
			if err != nil {
				return nil, err
			}
			out[n] = v
			continue
		}
		b, err := fs.ReadFile(s.fsys, path.Join(p, n))
		if err != nil {
			return nil, err
		}
		out[n] = string(b)
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
