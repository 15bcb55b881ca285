//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// raListen bounds the router advertisement listen on a NIC that is up.
const raListen = 2 * time.Second

// raWatch is a bounded listen for router advertisements on one NIC,
// started when the ephemeral network comes up so it overlaps the
// datasource search.
type raWatch struct {
	iface string
	done  chan struct{}
	offer netconfig.IPv6Offer
	err   error
}

func startRAWatch(iface string, d time.Duration) *raWatch {
	w := &raWatch{iface: iface, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		w.offer, w.err = listenRA(ctx, iface)
	}()
	return w
}

// result waits for the listen to end (it is bounded).
func (w *raWatch) result() (netconfig.IPv6Offer, error) {
	<-w.done
	return w.offer, w.err
}

// listenRA sends one router solicitation on iface and returns the offer of
// the first router advertisement that comes back from a link-local router,
// IPv6Unknown when none came before ctx ends.
func listenRA(ctx context.Context, iface string) (netconfig.IPv6Offer, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return netconfig.IPv6Unknown, fmt.Errorf("router advertisements on %s: %w", iface, err)
	}
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6)
	if err != nil {
		return netconfig.IPv6Unknown, fmt.Errorf("raw ICMPv6 socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, iface); err != nil {
		return netconfig.IPv6Unknown, fmt.Errorf("binding to %s: %w", iface, err)
	}
	// Neighbour discovery needs hop limit 255.
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS, 255)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, ifi.Index)
	allRouters := &unix.SockaddrInet6{Addr: netip.MustParseAddr("ff02::2").As16(), ZoneId: uint32(ifi.Index)}
	// Type 133, code 0; the kernel fills the checksum. The kernel sends its
	// own solicitations too; this one just asks now. A failure (no
	// link-local address yet) is not fatal: the kernel's will do.
	_ = unix.Sendto(fd, []byte{133, 0, 0, 0, 0, 0, 0, 0}, 0, allRouters)
	buf := make([]byte, 1500)
	for {
		dl, _ := ctx.Deadline()
		left := time.Until(dl)
		if ctx.Err() != nil || left <= 0 {
			return netconfig.IPv6Unknown, nil
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return netconfig.IPv6Unknown, fmt.Errorf("waiting for router advertisements: %w", err)
		}
		if n == 0 {
			continue
		}
		m, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		if err != nil {
			continue
		}
		src, ok := from.(*unix.SockaddrInet6)
		if !ok || !netip.AddrFrom16(src.Addr).IsLinkLocalUnicast() {
			continue
		}
		if offer, err := netconfig.ParseRouterAdvert(buf[:m]); err == nil {
			return offer, nil
		}
	}
}
