package harness

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// FileServer is a small HTTP server on 127.0.0.1 serving fixed documents,
// for the guest to reach through BootOptions.GuestFwd (an #include URL,
// an instance metadata service). It listens on the loopback address only
// and counts every request by path.
type FileServer struct {
	files map[string][]byte
	ln    net.Listener
	srv   *http.Server
	done  chan struct{}

	mu     sync.Mutex
	counts map[string]int
	log    []string
}

// ServeFiles starts a FileServer on 127.0.0.1 (an ephemeral port) answering
// GET/HEAD for each path of files (e.g. "/include.yaml") with its content
// and 404 for anything else. Close it when done.
func ServeFiles(files map[string][]byte) (*FileServer, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("file server: %w", err)
	}
	s := &FileServer{files: map[string][]byte{}, ln: ln, done: make(chan struct{}), counts: map[string]int{}}
	for p, b := range files {
		s.files[p] = b
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *FileServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts[r.URL.Path]++
	s.log = append(s.log, fmt.Sprintf("%s %s %s (User-Agent %q)", time.Now().Format("15:04:05.000"), r.Method, r.URL.RequestURI(), r.UserAgent()))
	s.mu.Unlock()
	b, ok := s.files[r.URL.Path]
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case !ok:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	}
}

// Port is the TCP port the server listens on (on 127.0.0.1).
func (s *FileServer) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// URL is http://127.0.0.1:PORT.
func (s *FileServer) URL() string { return "http://" + s.ln.Addr().String() }

// Count is the number of requests for path so far.
func (s *FileServer) Count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[path]
}

// Counts is a copy of the request counts by path.
func (s *FileServer) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for p, n := range s.counts {
		out[p] = n
	}
	return out
}

// Total is the number of requests for any path.
func (s *FileServer) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.counts {
		n += c
	}
	return n
}

// Log is one line per request, in arrival order.
func (s *FileServer) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

// String summarises the counts ("/a=1 /b=2").
func (s *FileServer) String() string {
	c := s.Counts()
	paths := make([]string, 0, len(c))
	for p := range c {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i, p := range paths {
		paths[i] = fmt.Sprintf("%s=%d", p, c[p])
	}
	return strings.Join(paths, " ")
}

// Close stops the server and waits for it; it is safe to call twice.
func (s *FileServer) Close() error {
	err := s.srv.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
