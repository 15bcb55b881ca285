package scaleway

// The source-port dialer.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"
)

// PortRange is an inclusive range of local TCP ports to connect from.
type PortRange struct {
	Low, High int
}

func (p PortRange) valid() bool { return p.Low >= 1 && p.High >= p.Low && p.High <= 65535 }

func (p PortRange) String() string { return fmt.Sprintf("%d-%d", p.Low, p.High) }

// next spreads successive connections over the range, so a port left in
// TIME_WAIT by the previous request is not the first tried.
var next atomic.Uint32

// DialContext connects from the first port of the range (starting at a
// rotating offset) that is free. A port in use, or whose 4-tuple is still
// taken, is skipped; any other error (EACCES: not root, refused,
// timeout) ends the attempt.
func (p PortRange) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if !p.valid() {
		return nil, fmt.Errorf("invalid source-port range %s", p)
	}
	n := p.High - p.Low + 1
	off := int(next.Add(1)) % n
	for i := 0; i < n; i++ {
		port := p.Low + (off+i)%n
		d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{Port: port}, Control: reuseAddr}
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL) {
			continue
		}
		if errors.Is(err, syscall.EACCES) {
			return nil, fmt.Errorf("source port %d needs root: %w", port, err)
		}
		return nil, err
	}
	return nil, fmt.Errorf("dial %s: every source port in %s is in use", addr, p)
}

// Client is a proxy-less HTTP client connecting from the range, without
// keep-alives (a source port is not held) or redirects.
func (p PortRange) Client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           p.DialContext,
			ResponseHeaderTimeout: 5 * time.Second,
			DisableKeepAlives:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
