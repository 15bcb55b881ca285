package cloudstack

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

func env(base string, pwPort int) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"CloudStack": map[string]any{"metadata_url": base, "password_server_port": pwPort}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				PasswordReply string `json:"password_reply"`
				Acknowledged  bool   `json:"acknowledged"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			var acks atomic.Int32
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), dstest.PasswordServer(t, "/", spec.PasswordReply, &acks))
			d, err := (&Source{}).Get(context.Background(), env(srv.URL, dstest.Port(t, srv)))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			for _, r := range srv.Requests() {
				if r.Header.Get(RequestHeader) == "" && !strings.HasPrefix(r.Path, "/"+APIVersion+"/") {
					t.Errorf("request outside /%s/: %s", APIVersion, r.Path)
				}
			}
			if got := acks.Load() == 1; got != spec.Acknowledged || acks.Load() > 1 {
				t.Errorf("%d saved_password acknowledgements, want acknowledged=%v", acks.Load(), spec.Acknowledged)
			}
		})
	}
}

// TestPasswords: the password server cases CloudStack shares with the
// other source that asks it.
func TestPasswords(t *testing.T) {
	dstest.ConformPasswords(t, dstest.Passwords{
		Source: func(url string, pwPort int) datasource.Source { return &Source{URL: url, PasswordPort: pwPort} },
		Env:    env, Tree: "testdata/new-password/tree", Path: "/",
	})
}

func TestPasswordURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://data-server/":              "http://data-server:8080/",
		"http://127.0.0.1:1234/":           "http://127.0.0.1:8080/",
		"http://[fd00::1]:80/x?y=z#f":      "http://[fd00::1]:8080/",
		"http://10.1.1.1/latest/meta-data": "http://10.1.1.1:8080/",
	} {
		if got, err := PasswordURL(base, DefaultPasswordPort); err != nil || got != want {
			t.Errorf("PasswordURL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	if _, err := PasswordURL("no-scheme", 1); err == nil {
		t.Error("PasswordURL accepted a URL without host")
	}
}

func TestRouterURL(t *testing.T) {
	for _, tc := range []struct {
		addr string
		port int
		want string
	}{
		{"10.1.1.1", 0, "http://10.1.1.1/"},
		{"10.1.1.1", 80, "http://10.1.1.1/"},
		{"10.1.1.1", 8081, "http://10.1.1.1:8081/"},
		{"fd00::1", 0, "http://[fd00::1]/"},
		{"fd00::1", 8081, "http://[fd00::1]:8081/"},
	} {
		if got := RouterURL(netip.MustParseAddr(tc.addr), tc.port); got != tc.want {
			t.Errorf("RouterURL(%s, %d) = %q, want %q", tc.addr, tc.port, got, tc.want)
		}
	}
}

// fakeResolver answers from a table and records the names asked; anything
// else is NXDOMAIN. No DNS traffic leaves the test.
type fakeResolver struct {
	addrs map[string][]netip.Addr
	err   error
	mu    sync.Mutex
	asked []string
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	f.asked = append(f.asked, network+" "+host)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if a, ok := f.addrs[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeResolver) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// TestFindRouter: cloud-init's get_vr_address order, with addresses that
// are never contacted.
func TestFindRouter(t *testing.T) {
	lease := func(server, router string) *datasource.Lease {
		l := &datasource.Lease{Iface: "eth0", Addr: netip.MustParsePrefix("192.0.2.50/24")}
		if server != "" {
			l.ServerID = netip.MustParseAddr(server)
		}
		if router != "" {
			l.Router = netip.MustParseAddr(router)
		}
		return l
	}
	dns := map[string][]netip.Addr{DataServerName: addrs("192.0.2.10")}
	for _, tc := range []struct {
		name    string
		dns     map[string][]netip.Addr
		lease   *datasource.Lease
		want    Router
		wantErr []string
	}{
		{"dns first", dns, lease("192.0.2.20", "192.0.2.1"), Router{netip.MustParseAddr("192.0.2.10"), "dns"}, nil},
		{"dns without a lease", dns, nil, Router{netip.MustParseAddr("192.0.2.10"), "dns"}, nil},
		{"dns prefers IPv4", map[string][]netip.Addr{DataServerName: addrs("2001:db8::10", "192.0.2.11")}, nil,
			Router{netip.MustParseAddr("192.0.2.11"), "dns"}, nil},
		{"dns IPv6 only", map[string][]netip.Addr{DataServerName: addrs("2001:db8::10")}, nil,
			Router{netip.MustParseAddr("2001:db8::10"), "dns"}, nil},
		{"dns mapped IPv4", map[string][]netip.Addr{DataServerName: addrs("::ffff:192.0.2.12")}, nil,
			Router{netip.MustParseAddr("192.0.2.12"), "dns"}, nil},
		{"unusable dns answer, server identifier", map[string][]netip.Addr{DataServerName: addrs("0.0.0.0")}, lease("192.0.2.20", "192.0.2.1"),
			Router{netip.MustParseAddr("192.0.2.20"), "dhcp-server-identifier"}, nil},
		{"server identifier before router", nil, lease("192.0.2.20", "192.0.2.1"),
			Router{netip.MustParseAddr("192.0.2.20"), "dhcp-server-identifier"}, nil},
		{"router", nil, lease("", "192.0.2.1"), Router{netip.MustParseAddr("192.0.2.1"), "default-gateway"}, nil},
		{"unspecified server identifier", nil, lease("0.0.0.0", "192.0.2.1"), Router{netip.MustParseAddr("192.0.2.1"), "default-gateway"}, nil},
		{"nothing", nil, nil, Router{}, []string{DataServerName, "no such host", "no DHCP lease"}},
		{"empty lease", nil, lease("", ""), Router{}, []string{DataServerName, "eth0", "neither a server identifier nor a router"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &fakeResolver{addrs: tc.dns}
			got, err := (&Source{Resolver: res}).FindRouter(context.Background(), tc.lease)
			if tc.wantErr != nil {
				if !errors.Is(err, ErrNoRouter) {
					t.Fatalf("err = %v, want ErrNoRouter", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to mention %q", err, w)
					}
				}
			} else if err != nil || got != tc.want {
				t.Errorf("FindRouter = %+v, %v; want %+v", got, err, tc.want)
			}
			if n := res.names(); len(n) != 1 || n[0] != "ip "+DataServerName {
				t.Errorf("resolver asked %q, want once for %q", n, DataServerName)
			}
		})
	}
}

// TestDiscovery: each way of finding the router, end to end, with the
// router's metadata and password services on one httptest server on
// 127.0.0.1 (Source.MetadataPort and PasswordPort map the discovered
// address onto its port).
func TestDiscovery(t *testing.T) {
	loopback := netip.MustParseAddr("127.0.0.1")
	for _, tc := range []struct {
		name  string
		dns   map[string][]netip.Addr
		lease *datasource.Lease
	}{
		{"dns", map[string][]netip.Addr{DataServerName: {loopback}}, nil},
		{"dns before the lease", map[string][]netip.Addr{DataServerName: {loopback}}, &datasource.Lease{Iface: "eth0"}},
		{"dhcp server identifier", nil, &datasource.Lease{Iface: "eth0", ServerID: loopback}},
		{"default gateway", nil, &datasource.Lease{Iface: "eth0", Router: loopback}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var acks atomic.Int32
			srv := dstest.Serve(t, "testdata/new-password/tree", dstest.PasswordServer(t, "/", "Xy7-new-pw\n", &acks))
			res := &fakeResolver{addrs: tc.dns}
			s := &Source{Resolver: res, MetadataPort: dstest.Port(t, srv), PasswordPort: dstest.Port(t, srv)}
			d, err := s.Get(context.Background(), datasource.Env{NetworkUp: true, Budget: 5 * time.Second, Lease: tc.lease})
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, "testdata/new-password/want.json", d, srv.URL)
			if acks.Load() != 1 {
				t.Errorf("%d acknowledgements, want 1", acks.Load())
			}
			if n := res.names(); len(n) != 1 || n[0] != "ip "+DataServerName {
				t.Errorf("resolver asked %q", n)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 || reqs[0].Path != "/"+APIVersion+"/meta-data/instance-id" {
				t.Errorf("first request %+v, want the instance-id probe", reqs)
			}
		})
	}
}

// TestNoRouter: nothing says where the router is: ErrNotFound naming what
// was tried, and no request at all.
func TestNoRouter(t *testing.T) {
	srv := dstest.Serve(t, "testdata/new-password/tree", nil)
	for _, tc := range []struct {
		name  string
		res   *fakeResolver
		lease *datasource.Lease
		want  []string
	}{
		{"no lease", &fakeResolver{}, nil, []string{DataServerName, "no such host", "no DHCP lease"}},
		{"lease without server or router", &fakeResolver{}, &datasource.Lease{Iface: "ens3"}, []string{"ens3", "neither a server identifier nor a router"}},
		{"resolver fails", &fakeResolver{err: errors.New("server misbehaving")}, nil, []string{"server misbehaving"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Source{Resolver: tc.res, MetadataPort: dstest.Port(t, srv)}
			_, err := s.Get(context.Background(), datasource.Env{NetworkUp: true, Budget: time.Second, Lease: tc.lease})
			if !errors.Is(err, datasource.ErrNotFound) || !errors.Is(err, ErrNoRouter) {
				t.Fatalf("err = %v, want ErrNotFound and ErrNoRouter", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to mention %q", err, w)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests made", n)
			}
		})
	}
}

// TestConfigOverridesDiscovery: a configured metadata_url wins over the
// lease, and no DNS lookup is made.
func TestConfigOverridesDiscovery(t *testing.T) {
	var acks atomic.Int32
	srv := dstest.Serve(t, "testdata/new-password/tree", dstest.PasswordServer(t, "/", "Xy7-new-pw\n", &acks))
	res := &fakeResolver{}
	e := env(srv.URL, dstest.Port(t, srv))
	e.Lease = &datasource.Lease{Iface: "eth0", ServerID: netip.MustParseAddr("192.0.2.20"), Router: netip.MustParseAddr("192.0.2.1")}
	d, err := (&Source{Resolver: res}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	dstest.Golden(t, "testdata/new-password/want.json", d, srv.URL)
	if n := res.names(); len(n) != 0 {
		t.Errorf("resolver asked %q with a configured URL", n)
	}
}

// TestMetadataURLs: with several configured URLs, the one that answers the
// probe serves the rest (the first is a closed port).
func TestMetadataURLs(t *testing.T) {
	var acks atomic.Int32
	srv := dstest.Serve(t, "testdata/saved-password/tree", dstest.PasswordServer(t, "/", "saved_password", &acks))
	e := datasource.Env{NetworkUp: true, Budget: 5 * time.Second, Config: map[string]any{"CloudStack": map[string]any{
		"metadata_urls": []any{dstest.ClosedURL(t), srv.URL}, "password_server_port": dstest.Port(t, srv)}}}
	d, err := (&Source{Resolver: &fakeResolver{}}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if want := "metadata (" + srv.URL + "/)"; d.Subplatform != want {
		t.Errorf("subplatform %q, want %q", d.Subplatform, want)
	}
}

// TestConform: the cases every metadata-URL source shares, and those of
// an EC2-style tree.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env: func(base string) datasource.Env {
			e := env(base, 1)
			e.Budget = time.Second // 5xx are retried until the budget ends
			return e
		},
		Root:         "testdata/saved-password/tree",
		Broken:       dstest.TreeBroken,
		AbsentBudget: time.Second,
	})
}

func FuzzPassword(f *testing.F) {
	dstest.FuzzPassword(f, ParsePassword, func(id, pw string) (*datasource.Data, error) {
		return Build(Input{MetaData: map[string]any{"instance-id": id}, Password: pw})
	})
}
