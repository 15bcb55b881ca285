// Package imdstest holds test helpers for metadata clients: services that
// are absent in the ways real ones are.
package imdstest

import (
	"net"
	"sync"
	"testing"
)

// BlackHole is a listener on 127.0.0.1 that accepts connections and never
// answers: a metadata address whose requests vanish (a firewall that drops
// them, a service that hangs). Only a timeout gets a client out of it.
type BlackHole struct {
	// URL is http://127.0.0.1:<port>.
	URL string

	ln       net.Listener
	mu       sync.Mutex
	conns    []net.Conn
	accepted int
}

// NewBlackHole starts a BlackHole, closed (with every connection it holds)
// when the test ends.
func NewBlackHole(t testing.TB) *BlackHole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("black hole: %v", err)
	}
	b := &BlackHole{URL: "http://" + ln.Addr().String(), ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed at cleanup
			}
			b.mu.Lock()
			b.accepted++
			b.conns = append(b.conns, c)
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			c.Close()
		}
	})
	return b
}

// Accepted is the number of connections accepted so far: how often a
// client tried this address.
func (b *BlackHole) Accepted() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accepted
}
