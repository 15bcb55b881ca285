package netup

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Rename gives the interface named from the name to. It refuses unless
// from is the device with hardware address mac, is down (an interface in
// use — an address the boot still needs, a network root — keeps its name)
// and no interface is called to already.
func Rename(from, to, mac string) error {
	// Routing only: a kernel without XFRM or netfilter netlink (an
	// initramfs's) refuses the handle of every family.
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()
	l, err := h.LinkByName(from)
	if err != nil {
		return fmt.Errorf("interface %s: %w", from, err)
	}
	a := l.Attrs()
	if !strings.EqualFold(a.HardwareAddr.String(), mac) {
		return fmt.Errorf("interface %s has address %s, not %s", from, a.HardwareAddr, mac)
	}
	if a.Flags&net.FlagUp != 0 {
		return fmt.Errorf("interface %s is up", from)
	}
	if _, err := h.LinkByName(to); err == nil {
		return fmt.Errorf("an interface %s exists already", to)
	} else if !errors.As(err, new(netlink.LinkNotFoundError)) {
		return fmt.Errorf("interface %s: %w", to, err)
	}
	if err := h.LinkSetName(l, to); err != nil {
		return fmt.Errorf("rename %s to %s: %w", from, to, err)
	}
	return nil
}
