package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Post is one request a PostRecorder answered.
type Post struct {
	Method string
	// Path and Query are the request URI's parts (Query decoded).
	Path  string
	Query url.Values
	// Form is the decoded application/x-www-form-urlencoded body, with its
	// field names in the order they were sent in Order.
	Form  url.Values
	Order []string
	// Status is what the recorder answered.
	Status int
	Time   time.Time
}

// PostRecorder is an HTTP server on 127.0.0.1 for phone_home-like callers:
// it records every request with its form body, and answers the first
// requests with the statuses given to ServePosts (to make the caller
// retry), then 200.
type PostRecorder struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu      sync.Mutex
	answers []int
	posts   []Post
}

// ServePosts starts a PostRecorder on 127.0.0.1 (an ephemeral port); the
// n-th request is answered with first[n] while there is one, then 200.
func ServePosts(first ...int) (*PostRecorder, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("post recorder: %w", err)
	}
	s := &PostRecorder{ln: ln, done: make(chan struct{}), answers: slices.Clone(first)}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *PostRecorder) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	p := Post{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Time: time.Now(), Status: http.StatusOK}
	p.Form, p.Order = parseFormOrdered(string(body))
	s.mu.Lock()
	if len(s.answers) > 0 {
		p.Status, s.answers = s.answers[0], s.answers[1:]
	}
	s.posts = append(s.posts, p)
	s.mu.Unlock()
	w.WriteHeader(p.Status)
	fmt.Fprintf(w, "%d\n", p.Status)
}

// parseFormOrdered decodes a form body, keeping the order of its fields.
func parseFormOrdered(body string) (url.Values, []string) {
	v := url.Values{}
	var order []string
	for kv := range strings.SplitSeq(body, "&") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		val, _ = url.QueryUnescape(val)
		if _, seen := v[k]; !seen {
			order = append(order, k)
		}
		v.Add(k, val)
	}
	return v, order
}

// Posts are the requests so far, in arrival order.
func (s *PostRecorder) Posts() []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.posts)
}

// Port is the server's port on 127.0.0.1.
func (s *PostRecorder) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server.
func (s *PostRecorder) Close() error {
	err := s.srv.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// LineSink is a TCP listener on 127.0.0.1 keeping every line any client
// sends (rsyslog's "@@host:port" forwarding, one message per line).
type LineSink struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen []string
	cons []net.Conn
}

// ListenLines starts a LineSink on 127.0.0.1 (an ephemeral port).
func ListenLines() (*LineSink, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("line sink: %w", err)
	}
	s := &LineSink{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cons = append(s.cons, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				sc := bufio.NewScanner(c)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for sc.Scan() {
					s.mu.Lock()
					s.seen = append(s.seen, sc.Text())
					s.mu.Unlock()
				}
			}()
		}
	}()
	return s, nil
}

// Port is the listener's port on 127.0.0.1.
func (s *LineSink) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Lines are the lines received so far.
func (s *LineSink) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Close stops listening, drops the connections and waits for the readers.
func (s *LineSink) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for _, c := range s.cons {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}
