package imdsserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// CheckLoopback refuses a listen address whose host is not a loopback IP
// literal (127.0.0.0/8 or ::1): the simulator must never be reachable from
// another machine. "localhost" and an empty host are refused too.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("listen address %q: bad port: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() || ip.Zone() != "" {
		return fmt.Errorf("listen address %q: the host must be a loopback IP address such as 127.0.0.1 or [::1]", addr)
	}
	return nil
}

// Listen opens a TCP listener on a loopback address (CheckLoopback).
func Listen(addr string) (net.Listener, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := CheckLoopback(ln.Addr().String()); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Running is a Server answering on a loopback listener.
type Running struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Start serves s on addr (a loopback address; port 0 picks one) in the
// background until Close.
func (s *Server) Start(addr string) (*Running, error) {
	ln, err := Listen(addr)
	if err != nil {
		return nil, err
	}
	r := &Running{ln: ln, srv: &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1)}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// Addr is the listening address (127.0.0.1:PORT).
func (r *Running) Addr() string { return r.ln.Addr().String() }

// Port is the listening TCP port.
func (r *Running) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// URL is http://ADDR.
func (r *Running) URL() string { return "http://" + r.Addr() }

// Close stops serving and waits for the server to end.
func (r *Running) Close() error {
	err := r.srv.Close()
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Wait serves until ctx is done, then shuts down gracefully; it returns
// early with the error if serving fails.
func (r *Running) Wait(ctx context.Context) error {
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(sctx)
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	r.done <- http.ErrServerClosed
	return err
}
