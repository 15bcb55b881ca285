package netup

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/vishvananda/netns"
)

// testNet is a pair of network namespaces created for one test: the client
// side has link cr0 (down), the server side cr1 (10.99.0.1/24, up), joined
// by a veth pair. The host's own interfaces are never touched; both
// namespaces (and with them the veth pair) are deleted on cleanup.
type testNet struct {
	client, server string
}

func newTestNet(t *testing.T) *testNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces (CI runs this as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip to create network namespaces")
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, time.Now().UnixNano()%10000)
	n := &testNet{client: "crnetup-c" + id, server: "crnetup-s" + id}
	if out, err := exec.Command("ip", "netns", "add", n.client).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.client).Run() })
	if out, err := exec.Command("ip", "netns", "add", n.server).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.server).Run() })
	for _, args := range [][]string{
		{"-n", n.client, "link", "add", "cr0", "address", "52:54:00:99:00:02", "type", "veth", "peer", "name", "cr1", "netns", n.server},
		{"-n", n.server, "addr", "add", "10.99.0.1/24", "dev", "cr1"},
		{"-n", n.server, "link", "set", "cr1", "up"},
		{"-n", n.server, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return n
}

// in runs fn on a fresh OS thread inside namespace name. The thread is
// never unlocked, so the runtime discards it when fn returns.
func in(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ns, err := netns.GetFromName(name)
		if err != nil {
			errc <- fmt.Errorf("opening netns %s: %w", name, err)
			return
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("entering netns %s: %w", name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// startServer runs s on cr1 inside the server namespace until the test ends.
func (n *testNet) startServer(t *testing.T, s *fakeServer) {
	t.Helper()
	ready := make(chan error, 1)
	go func() {
		_ = in(n.server, func() error {
			srv, err := server4.NewServer("cr1", &net.UDPAddr{Port: dhcpv4.ServerPort}, s.handle)
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
		t.Fatalf("starting DHCP server: %v", err)
	}
}

// ip runs ip -n <client> args and returns its output.
func (n *testNet) ip(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", n.client}, args...)...).CombinedOutput()
	if err != nil {
		t.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (n *testNet) linkUp(t *testing.T) bool {
	out := n.ip(t, "-o", "link", "show", "dev", "cr0")
	flags := out[strings.Index(out, "<")+1 : strings.Index(out, ">")]
	return strings.Contains(","+flags+",", ",UP,")
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func TestUpReleaseDownInNetns(t *testing.T) {
	n := newTestNet(t)
	srv := newFakeServer("10.99.0.50", "10.99.0.1",
		dhcpv4.OptRouter(net.IPv4(10, 99, 0, 1)),
		dhcpv4.OptDNS(net.IPv4(10, 99, 0, 53)),
		dhcpv4.OptDomainName("netup.test"),
	)
	n.startServer(t, srv)

	etc := filepath.Join(t.TempDir(), "etc")
	resolv := filepath.Join(etc, "resolv.conf")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	const before = "nameserver 192.0.2.1\n"
	if err := os.WriteFile(resolv, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if n.linkUp(t) {
		t.Fatal("cr0 should start down")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var l *Lease
	err := in(n.client, func() error {
		var err error
		l, err = Up(ctx, Options{
			Interfaces:      []string{"cr*"},
			DHCPTimeout:     time.Second,
			LinkLocalRoutes: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")},
			ResolvConf:      resolv,
			Logger:          testLogger(t),
		})
		if err != nil {
			return err
		}

		addrs := n.ip(t, "-4", "-o", "addr", "show", "dev", "cr0")
		if !strings.Contains(addrs, "10.99.0.50/24") {
			t.Errorf("address not applied: %s", addrs)
		}
		routes := n.ip(t, "-4", "route", "show")
		for _, want := range []string{"default via 10.99.0.1 dev cr0 proto dhcp", "169.254.169.254 dev cr0 proto dhcp scope link src 10.99.0.50"} {
			if !strings.Contains(routes, want) {
				t.Errorf("route %q missing from:\n%s", want, routes)
			}
		}
		if got, _ := os.ReadFile(resolv); !strings.Contains(string(got), "nameserver 10.99.0.53\n") {
			t.Errorf("resolv.conf = %q", got)
		}
		if l.ServerID != netip.MustParseAddr("10.99.0.1") || l.Iface != "cr0" || !l.Applied.LinkWasDown {
			t.Errorf("lease %+v", l)
		}
		if p, err := l.WriteKlibcState(t.TempDir()); err != nil {
			t.Error(err)
		} else if b, _ := os.ReadFile(p); !strings.Contains(string(b), "IPV4ADDR='10.99.0.50'\n") {
			t.Errorf("%s:\n%s", p, b)
		}

		if err := l.Release(ctx); err != nil {
			return err
		}
		select {
		case <-srv.released:
		case <-ctx.Done():
			t.Error("server saw no DHCPRELEASE")
		}
		return l.Down()
	})
	if err != nil {
		t.Fatal(err)
	}
	if addrs := n.ip(t, "-4", "-o", "addr", "show", "dev", "cr0"); strings.Contains(addrs, "10.99.0.50") {
		t.Errorf("address left behind: %s", addrs)
	}
	if routes := n.ip(t, "-4", "route", "show"); strings.TrimSpace(routes) != "" {
		t.Errorf("routes left behind:\n%s", routes)
	}
	if n.linkUp(t) {
		t.Error("cr0 left up; it was down before")
	}
	if got, _ := os.ReadFile(resolv); string(got) != before {
		t.Errorf("resolv.conf not restored: %q", got)
	}
	if err := l.Down(); err != nil {
		t.Errorf("second Down: %v", err)
	}
}

func TestStaticInNetns(t *testing.T) {
	n := newTestNet(t)
	c, err := ParseIPArg("10.99.0.77::10.99.0.1:255.255.255.0:box:cr0:off:10.99.0.53")
	if err != nil {
		t.Fatal(err)
	}
	err = in(n.client, func() error {
		l, err := Static(t.Context(), c, Options{CarrierTimeout: 2 * time.Second, Logger: testLogger(t)})
		if err != nil {
			return err
		}
		if addrs := n.ip(t, "-4", "-o", "addr", "show", "dev", "cr0"); !strings.Contains(addrs, "10.99.0.77/24") {
			t.Errorf("address not applied: %s", addrs)
		}
		if routes := n.ip(t, "-4", "route", "show"); !strings.Contains(routes, "default via 10.99.0.1 dev cr0 proto static") {
			t.Errorf("default route missing:\n%s", routes)
		}
		if err := l.Release(t.Context()); err != nil {
			t.Errorf("Release of a static lease: %v", err)
		}
		return l.Down()
	})
	if err != nil {
		t.Fatal(err)
	}
	if addrs := n.ip(t, "-4", "-o", "addr", "show", "dev", "cr0"); strings.Contains(addrs, "10.99.0.77") {
		t.Errorf("address left behind: %s", addrs)
	}
	if n.linkUp(t) {
		t.Error("cr0 left up")
	}
}

func TestUpNoServerInNetns(t *testing.T) {
	n := newTestNet(t)
	err := in(n.client, func() error {
		_, err := Up(t.Context(), Options{Interfaces: []string{"cr0"}, DHCPTimeout: 200 * time.Millisecond, DHCPRetries: 2})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), ErrNoLease.Error()) {
		t.Fatalf("Up without a server: %v, want ErrNoLease", err)
	}
	if n.linkUp(t) {
		t.Error("cr0 left up after a failed Up")
	}
	err = in(n.client, func() error {
		_, err := Up(t.Context(), Options{Interfaces: []string{"nosuch*"}})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), ErrNoInterfaces.Error()) {
		t.Fatalf("Up with no matching link: %v, want ErrNoInterfaces", err)
	}
}
