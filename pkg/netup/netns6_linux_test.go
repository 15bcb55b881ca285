package netup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/server6"
)

// enableIPv6 turns IPv6 on in both test namespaces (all, default and the
// veth ends) through /proc/sys/net of a thread inside each. It skips when
// the kernel has no IPv6. (cr1 gets its link-local address only once cr0 is
// up and the veth has carrier, so nothing can be waited for here.)
func (n *testNet) enableIPv6(t *testing.T) {
	t.Helper()
	for ns, link := range map[string]string{n.client: "cr0", n.server: "cr1"} {
		err := in(ns, func() error {
			if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
				return fmt.Errorf("%w: %v", ErrNoIPv6, err)
			}
			for _, c := range []string{"all", "default", link} {
				p := "/proc/sys/net/ipv6/conf/" + c + "/disable_ipv6"
				if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
					return fmt.Errorf("%w: writing %s: %v", ErrNoIPv6, p, err)
				}
			}
			return nil
		})
		if errors.Is(err, ErrNoIPv6) {
			t.Skipf("IPv6 unavailable in the test namespace: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// startServer6 runs s on cr1 ([::]:547 bound to cr1, ff02::1:2 joined)
// inside the server namespace until the test ends.
func (n *testNet) startServer6(t *testing.T, s *fakeServer6) {
	t.Helper()
	ready := make(chan error, 1)
	go func() {
		_ = in(n.server, func() error {
			srv, err := server6.NewServer("cr1", nil, s.handle)
			if err != nil {
				ready <- err
				return err
			}
			t.Cleanup(func() { srv.Close() })
			ready <- nil
			return srv.Serve()
		})
	}()
	if err := <-ready; err != nil {
		t.Fatalf("starting DHCPv6 server: %v", err)
	}
}

// DHCPv4 and DHCPv6 together on one veth: both addresses, resolv.conf with
// both families, both state files, both RELEASEs, and Down removes it all.
func TestUpDualStackInNetns(t *testing.T) {
	n := newTestNet(t)
	n.enableIPv6(t)
	srv := newFakeServer("10.99.0.50", "10.99.0.1", dhcpv4.OptDNS(net.IPv4(10, 99, 0, 53)))
	n.startServer(t, srv)
	srv6 := newFakeServer6("fd99::50", []string{"fd99::53"}, "six.test")
	n.startServer6(t, srv6)

	resolv := filepath.Join(t.TempDir(), "etc", "resolv.conf")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var l *Lease
	err := in(n.client, func() error {
		var err error
		l, err = Up(ctx, Options{
			Family:      FamilyBoth,
			Interfaces:  []string{"cr0"},
			DHCPTimeout: time.Second,
			ResolvConf:  resolv,
			Logger:      testLogger(t),
		})
		if err != nil {
			return err
		}
		if addrs := n.ip(t, "-o", "addr", "show", "dev", "cr0"); !strings.Contains(addrs, "10.99.0.50/24") || !strings.Contains(addrs, "fd99::50/128") {
			t.Errorf("addresses not applied: %s", addrs)
		} else if strings.Contains(addrs, "fd99::50/128 scope global tentative") {
			t.Errorf("address still tentative after Up: %s", addrs)
		}
		if routes := n.ip(t, "-6", "route", "show", "default"); strings.TrimSpace(routes) != "" {
			t.Errorf("IPv6 default route added (RAs provide it): %s", routes)
		}
		if got, _ := os.ReadFile(resolv); !strings.Contains(string(got), "nameserver 10.99.0.53\nnameserver fd99::53\n") || !strings.Contains(string(got), "six.test") {
			t.Errorf("resolv.conf = %q", got)
		}
		if l.Proto != ProtoDHCP || l.Addr6 != netip.MustParsePrefix("fd99::50/128") || len(l.ServerID6) == 0 || l.Applied.Addr6 != l.Addr6 {
			t.Errorf("lease %+v", l)
		}
		dir := t.TempDir()
		if _, err := l.WriteKlibcState(dir); err != nil {
			t.Error(err)
		} else if b, _ := os.ReadFile(KlibcState6Path(dir, "cr0")); !strings.Contains(string(b), "IPV6ADDR='fd99::50'\n") {
			t.Errorf("net6-cr0.conf:\n%s", b)
		}
		if err := l.Release(ctx); err != nil {
			return err
		}
		for name, ch := range map[string]chan struct{}{"DHCPRELEASE": srv.released, "DHCPv6 RELEASE": srv6.released} {
			select {
			case <-ch:
			case <-ctx.Done():
				t.Errorf("server saw no %s", name)
			}
		}
		if !l.Applied.Released || !l.Applied.Released6 {
			t.Errorf("applied %+v", l.Applied)
		}
		return l.Down()
	})
	if err != nil {
		t.Fatal(err)
	}
	if addrs := n.ip(t, "-o", "addr", "show", "dev", "cr0"); strings.Contains(addrs, "10.99.0.50") || strings.Contains(addrs, "fd99::50") {
		t.Errorf("address left behind: %s", addrs)
	}
	if _, err := os.Stat(resolv); !os.IsNotExist(err) {
		t.Errorf("resolv.conf left behind: %v", err)
	}
	if n.linkUp(t) {
		t.Error("cr0 left up; it was down before")
	}
	if got := srv6.messages(); len(got) < 3 || got[0] != dhcpv6.MessageTypeSolicit || got[len(got)-1] != dhcpv6.MessageTypeRelease {
		t.Errorf("DHCPv6 server saw %v", got)
	}
}

// DHCPv6 only: a v6-only lease, applied, released and removed.
func TestUpV6OnlyInNetns(t *testing.T) {
	n := newTestNet(t)
	n.enableIPv6(t)
	srv6 := newFakeServer6("fd99::77", nil)
	n.startServer6(t, srv6)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	err := in(n.client, func() error {
		l, err := Up(ctx, Options{Family: FamilyV6, Interfaces: []string{"cr*"}, DHCPTimeout: time.Second, Logger: testLogger(t)})
		if err != nil {
			return err
		}
		if l.Proto != ProtoDHCP6 || l.Addr.IsValid() || l.Addr6.Addr() != netip.MustParseAddr("fd99::77") {
			t.Errorf("lease %+v", l)
		}
		if addrs := n.ip(t, "-6", "-o", "addr", "show", "dev", "cr0"); !strings.Contains(addrs, "fd99::77/128") {
			t.Errorf("address not applied: %s", addrs)
		}
		if addrs := n.ip(t, "-4", "-o", "addr", "show", "dev", "cr0"); strings.TrimSpace(addrs) != "" {
			t.Errorf("IPv4 address on a v6-only lease: %s", addrs)
		}
		if err := l.Release(ctx); err != nil {
			return err
		}
		if err := l.Down(); err != nil {
			return err
		}
		return l.Down()
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv6.released:
	default:
		t.Error("server saw no RELEASE")
	}
	if addrs := n.ip(t, "-6", "-o", "addr", "show", "dev", "cr0"); strings.Contains(addrs, "fd99::77") {
		t.Errorf("address left behind: %s", addrs)
	}
}

// IPv6 disabled on the link: DHCPv6 fails at once with ErrNoIPv6 instead
// of waiting for a link-local address that never comes.
func TestUpV6DisabledInNetns(t *testing.T) {
	n := newTestNet(t)
	err := in(n.client, func() error {
		if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
			return nil
		}
		return os.WriteFile("/proc/sys/net/ipv6/conf/cr0/disable_ipv6", []byte("1"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = in(n.client, func() error {
		_, err := Up(t.Context(), Options{Family: FamilyV6, Interfaces: []string{"cr0"}, CarrierTimeout: time.Second, DADTimeout: 20 * time.Second})
		return err
	})
	if !errors.Is(err, ErrNoLease) || !errors.Is(err, ErrNoIPv6) {
		t.Fatalf("Up with IPv6 disabled: %v, want ErrNoLease and ErrNoIPv6", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v: waited for DAD on a link without IPv6", d)
	}
	if n.linkUp(t) {
		t.Error("cr0 left up after a failed Up")
	}
}
