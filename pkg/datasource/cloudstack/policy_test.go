package cloudstack

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// lateResolver answers DataServerName with addr after delay (never, when
// addr is invalid: it waits for the caller to give up), and records the
// time its context gave it.
type lateResolver struct {
	addr  netip.Addr
	delay time.Duration
	given atomic.Int64 // time.Duration until the context's deadline
}

func (r *lateResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if dl, ok := ctx.Deadline(); ok {
		r.given.Store(int64(time.Until(dl)))
	}
	if !r.addr.IsValid() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(r.delay):
		return []netip.Addr{r.addr}, nil
	}
}

// TestRouterDiscoveryFollowsPolicy: under the boot's Policy, finding the
// virtual router has the source's detection window (not Env.Budget,
// which the initramfs keeps short for local sources): a resolver and a
// service that are slow but working are read; a resolver that never
// answers and a router that hangs end with ErrNotFound, the lookup
// bounded by the window.
func TestRouterDiscoveryFollowsPolicy(t *testing.T) {
	loopback := netip.MustParseAddr("127.0.0.1")
	short := 50 * time.Millisecond // shorter than anything below takes
	t.Run("slow resolver and service", func(t *testing.T) {
		var acks atomic.Int32
		srv := dstest.Serve(t, "testdata/new-password/tree", dstest.Late(150*time.Millisecond, dstest.PasswordServer(t, "/", "Xy7-new-pw\n", &acks)))
		res := &lateResolver{addr: loopback, delay: 300 * time.Millisecond}
		s := &Source{Resolver: res, MetadataPort: dstest.Port(t, srv), PasswordPort: dstest.Port(t, srv)}
		pol := imds.Policy{Deadline: time.Minute, Probe: time.Second}
		e := datasource.Env{NetworkUp: true, Budget: short, Policy: &pol}
		d, err := s.Get(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		dstest.Golden(t, "testdata/new-password/want.json", d, srv.URL)
		if got := time.Duration(res.given.Load()); got <= short {
			t.Errorf("the lookup was given %v: Env.Budget, not the detection window", got)
		}
	})
	t.Run("slow resolver without policy cut by the budget", func(t *testing.T) {
		res := &lateResolver{addr: loopback, delay: 300 * time.Millisecond}
		_, err := (&Source{Resolver: res}).Get(context.Background(), datasource.Env{NetworkUp: true, Budget: short})
		if !errors.Is(err, datasource.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	for _, tc := range []struct {
		name  string
		res   *lateResolver
		lease func(srv *dstest.Server) *datasource.Lease
		cfg   map[string]any
	}{
		{"resolver never answers", &lateResolver{}, func(*dstest.Server) *datasource.Lease { return nil }, nil},
		{"resolver never answers, max_wait", &lateResolver{}, func(*dstest.Server) *datasource.Lease { return nil },
			map[string]any{"CloudStack": map[string]any{"max_wait": 0.2}}},
		{"router hangs", &lateResolver{}, func(*dstest.Server) *datasource.Lease {
			return &datasource.Lease{Iface: "eth0", ServerID: loopback}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/new-password/tree", dstest.Hang)
			window := 200 * time.Millisecond
			pol := imds.Policy{Deadline: time.Hour, Probe: window}
			if tc.cfg != nil {
				pol.Probe = time.Hour // max_wait is the window
			}
			e := datasource.Env{NetworkUp: true, Budget: time.Hour, Policy: &pol, Lease: tc.lease(srv), Config: tc.cfg}
			done := make(chan error, 1)
			go func() {
				_, err := (&Source{Resolver: tc.res, MetadataPort: dstest.Port(t, srv)}).Get(context.Background(), e)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, datasource.ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound", err)
				}
				t.Log(err)
			case <-time.After(30 * time.Second):
				t.Fatal("Get did not end with the detection window")
			}
			if got := time.Duration(tc.res.given.Load()); got > window {
				t.Errorf("the lookup was given %v, more than the %v window", got, window)
			}
		})
	}
}
