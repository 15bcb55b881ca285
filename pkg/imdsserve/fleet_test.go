package imdsserve

// The fleet test (issue 15, item 6): many instances boot at once against
// one flaky metadata service. Each simulated instance runs the real
// datasource code (ec2.Source and openstack.Source through pkg/imds, with
// their real retry policy, budget and timeouts; nocloud.Source for the
// NoCloud-net seed) over its
// own HTTP client bound to its own loopback address, 127.0.x.y, which is
// how the server tells instances apart (PerClient trees; the NoCloud seed
// is per instance by URL). Faults: a share of requests answered 5xx and a
// share delayed by a latency spike, seeded.
//
// Asserted: every instance provisions with its own instance-id and
// user-data, and no retry storm: each instance's request count stays
// within the policy's bound (attempts per request × the requests of a
// fault-free boot), and the fleet's total within 1.5× a fault-free fleet's.
// Reported (not asserted): p50/p99/max provisioning time, requests per
// instance, wall time.
//
// Knobs (environment): CLOUDROOT_FLEET_INSTANCES (default 1000; 100 with
// -short), CLOUDROOT_FLEET_CONCURRENCY (instances booting at once, default
// 100), CLOUDROOT_FLEET_FAULTS (ParseFaults; default
// errors=0.1,spikes=0.05,spike=300ms,seed=1). `just fleet` runs it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

type fleetConfig struct {
	instances, concurrency int
	faults                 Faults
}

func fleetSettings(t *testing.T) fleetConfig {
	t.Helper()
	c := fleetConfig{instances: 1000, concurrency: 100,
		faults: Faults{ErrorRate: 0.1, SpikeRate: 0.05, Spike: 300 * time.Millisecond, Seed: 1}}
	if testing.Short() {
		c.instances = 100
	}
	for _, v := range []struct {
		env string
		dst *int
	}{{"CLOUDROOT_FLEET_INSTANCES", &c.instances}, {"CLOUDROOT_FLEET_CONCURRENCY", &c.concurrency}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 || n > 60000 {
				t.Fatalf("%s=%q: want a count between 1 and 60000", v.env, s)
			}
			*v.dst = n
		}
	}
	if s := os.Getenv("CLOUDROOT_FLEET_FAULTS"); s != "" {
		f, err := ParseFaults(s)
		if err != nil {
			t.Fatalf("CLOUDROOT_FLEET_FAULTS: %v", err)
		}
		c.faults = f
	}
	return c
}

// instanceAddr is instance i's loopback address: 127.0.1.1, 127.0.1.2, …
// (250 a /24, so never 127.0.0.x).
func instanceAddr(i int) string {
	return fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250)
}

func instanceID(i int) string { return fmt.Sprintf("i-0f1ee7%011x", i) }

func userData(i int) string {
	return fmt.Sprintf("#cloud-config\nhostname: fleet-%04d\nwrite_files:\n- path: /etc/fleet-id\n  content: %s\n", i, instanceID(i))
}

// treeDir is where the fleet's trees go: memory (/dev/shm) when the host
// has it, as tens of thousands of small files on a busy disk take longer
// to write and remove than the fleet takes to boot; else t.TempDir.
func treeDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "cloudroot-fleet-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// writeTrees writes n instances' trees, a few at a time.
func writeTrees(t *testing.T, n int, tree func(i int) (string, map[string]string)) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	next := atomic.Int64{}
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				dir, files := tree(i)
				for p, s := range files {
					hp := filepath.Join(dir, p)
					err := os.MkdirAll(filepath.Dir(hp), 0o755)
					if err == nil {
						err = os.WriteFile(hp, []byte(s), 0o644)
					}
					if err != nil {
						select {
						case errs <- err:
						default:
						}
						return
					}
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// ec2Tree is instance i's IMDS tree: a compact AWS layout (identity,
// placement, one key, one interface, user-data, identity document).
func ec2Tree(i int) map[string]string {
	iid := instanceID(i)
	ip := fmt.Sprintf("10.0.%d.%d", i/250, 10+i%250)
	mac := fmt.Sprintf("0a:1b:2c:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)
	host := fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/250, 10+i%250)
	doc, _ := json.MarshalIndent(map[string]any{
		"accountId": "123456789012", "architecture": "x86_64", "availabilityZone": "eu-west-1b",
		"imageId": "ami-0a1b2c3d4e5f60718", "instanceId": iid, "instanceType": "t3.micro",
		"pendingTime": "2026-11-25T09:13:41Z", "privateIp": ip, "region": "eu-west-1", "version": "2017-09-30",
	}, "", "  ")
	v := "2021-03-23/"
	md := v + "meta-data/"
	nic := md + "network/interfaces/macs/" + mac + "/"
	return map[string]string{
		md + "ami-id":                            "ami-0a1b2c3d4e5f60718",
		md + "hostname":                          host,
		md + "local-hostname":                    host,
		md + "instance-id":                       iid,
		md + "instance-type":                     "t3.micro",
		md + "local-ipv4":                        ip,
		md + "mac":                               mac,
		md + "placement/availability-zone":       "eu-west-1b",
		md + "placement/region":                  "eu-west-1",
		md + "public-keys/_index":                "0=fleet",
		md + "public-keys/0/openssh-key":         fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fleet-%04d\n", i),
		md + "security-groups":                   "default",
		nic + "device-number":                    "0",
		nic + "local-ipv4s":                      ip,
		nic + "mac":                              mac,
		nic + "subnet-ipv4-cidr-block":           "10.0.0.0/16",
		nic + "vpc-id":                           "vpc-0a1b2c3d",
		v + "user-data":                          userData(i),
		v + "dynamic/instance-identity/document": string(doc),
	}
}

// instanceHTTP is an instance's transport: every connection from its own
// loopback address, no proxy.
func instanceHTTP(addr string) (*http.Client, func()) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

// boot is one instance's datasource run.
type boot struct {
	data     *datasource.Data
	err      error
	duration time.Duration
}

// fleetRun boots instances 0..n-1 (conc at a time) with get, and returns
// each outcome and the wall time.
func fleetRun(n, conc int, get func(ctx context.Context, i int) (*datasource.Data, error)) ([]boot, time.Duration) {
	out := make([]boot, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			d, err := get(context.Background(), i)
			out[i] = boot{data: d, err: err, duration: time.Since(t0)}
		})
	}
	wg.Wait()
	return out, time.Since(start)
}

// checkFleet asserts every instance got its own identity and user-data and
// that request counts show no storm, then reports the figures.
func checkFleet(t *testing.T, name string, cfg fleetConfig, boots []boot, wall time.Duration, perInstance []int, baseline, attempts int, injected FaultStats) {
	t.Helper()
	failed := 0
	for i, b := range boots {
		switch {
		case b.err != nil:
			failed++
			if failed <= 5 {
				t.Errorf("instance %d (%s) did not provision: %v", i, instanceAddr(i), b.err)
			}
		case b.data.InstanceID() != instanceID(i):
			t.Errorf("instance %d got instance-id %q, want %q", i, b.data.InstanceID(), instanceID(i))
		case string(b.data.UserData) != userData(i):
			t.Errorf("instance %d got user-data %q", i, b.data.UserData)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d instances did not provision", failed, len(boots))
	}
	total, most := 0, 0
	for i, n := range perInstance {
		total += n
		most = max(most, n)
		if n > attempts*baseline {
			t.Errorf("retry storm: instance %d made %d requests, the bound is %d (%d attempts × %d requests of a fault-free boot)", i, n, attempts*baseline, attempts, baseline)
		}
	}
	if limit := len(boots) * baseline * 3 / 2; total > limit {
		t.Errorf("retry storm: the fleet made %d requests, more than 1.5 × %d (a fault-free fleet's %d)", total, limit*2/3, len(boots)*baseline)
	}
	durs := make([]time.Duration, len(boots))
	for i, b := range boots {
		durs[i] = b.duration
	}
	slices.Sort(durs)
	pct := func(p float64) time.Duration { return durs[min(len(durs)-1, int(p*float64(len(durs))))] }
	t.Logf("fleet %s: %d instances, %d at once, faults %s", name, len(boots), cfg.concurrency, cfg.faults)
	t.Logf("fleet %s: provisioned %d/%d; wall %v; provisioning p50 %v p99 %v max %v",
		name, len(boots)-failed, len(boots), wall.Round(time.Millisecond), pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), durs[len(durs)-1].Round(time.Millisecond))
	t.Logf("fleet %s: requests %d (fault-free %d each, %d in all): %.2f per instance, max %d (bound %d); injected %d errors, %d spikes",
		name, total, baseline, baseline*len(boots), float64(total)/float64(len(boots)), most, attempts*baseline, injected.Errors, injected.Spikes)
}

// attemptsWithin is how many attempts imds' default backoff allows in
// budget, with every delay drawn at its shortest.
func attemptsWithin(budget time.Duration) int {
	var b imds.Backoff
	n, spent := 1, time.Duration(0)
	for ; ; n++ {
		spent += b.Delay(n-1, 0)
		if spent > budget {
			return n
		}
	}
}

// imdsFleet boots cfg.instances instances, each running src from its own
// address, against one PerClient server of cloud serving tree(i) to
// instance i, after one fault-free boot that gives the request count the
// bound is made of. attempts is the source's attempts per request.
func imdsFleet(t *testing.T, name, cloud string, src datasource.Source, dmi func(i int) bootenv.DMI, tree func(i int) map[string]string, attempts int) {
	cfg := fleetSettings(t)
	dir := treeDir(t)
	writeTrees(t, cfg.instances+1, func(i int) (string, map[string]string) {
		return filepath.Join(dir, instanceAddr(i)), tree(i)
	})
	get := func(srvURL string) func(ctx context.Context, i int) (*datasource.Data, error) {
		return func(ctx context.Context, i int) (*datasource.Data, error) {
			hc, done := instanceHTTP(instanceAddr(i))
			defer done()
			env := datasource.Env{
				NetworkUp: true,
				HTTP:      hc,
				DMI:       dmi(i),
				// The sources' retries are bounded by count (the storm
				// check below); their wall-clock budget (20 s) is what a
				// loaded test host can exceed for an unlucky instance
				// with a hundred others running, so it is widened here.
				Budget: 2 * time.Minute,
				Config: map[string]any{src.Name(): map[string]any{"metadata_urls": []any{srvURL}}},
			}
			return src.Get(ctx, env)
		}
	}
	start := func(f Faults) (*Server, *Running) {
		s, err := New(Options{Cloud: cloud, Dir: dir, PerClient: true, RequireToken: cloud == CloudEC2, Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		run, err := s.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { run.Close() })
		return s, run
	}
	calm, calmRun := start(Faults{})
	b, _ := fleetRun(1, 1, func(ctx context.Context, _ int) (*datasource.Data, error) {
		return get(calmRun.URL())(ctx, cfg.instances)
	})
	if b[0].err != nil {
		t.Fatalf("fault-free boot: %v", b[0].err)
	}
	baseline := len(calm.Requests())

	s, run := start(cfg.faults)
	boots, wall := fleetRun(cfg.instances, cfg.concurrency, get(run.URL()))
	per := map[string]int{}
	for _, r := range s.Requests() {
		per[r.Client]++
	}
	counts := make([]int, cfg.instances)
	for i := range counts {
		counts[i] = per[instanceAddr(i)]
	}
	checkFleet(t, name, cfg, boots, wall, counts, baseline, attempts, s.FaultStats())
}

// TestFleetEC2: instances run ec2.Source (AWS: IMDSv2 token, version
// probe, meta-data crawl, user-data, identity document) against one
// `imds serve --per-client --require-token --faults` server.
func TestFleetEC2(t *testing.T) {
	imdsFleet(t, "ec2", CloudEC2, &ec2.Source{}, func(i int) bootenv.DMI {
		return bootenv.DMI{SysVendor: "Amazon EC2", ProductUUID: fmt.Sprintf("EC2E1916-9099-7CAF-FD21-%012X", i)}
	}, ec2Tree, 1+ec2.DefaultReadRetries)
}

// TestFleetOpenStack: instances run openstack.Source (version listing,
// meta_data.json, user_data, vendor and network data) against one
// `imds serve --cloud openstack --per-client --faults` server.
func TestFleetOpenStack(t *testing.T) {
	imdsFleet(t, "openstack", CloudOpenStack, &openstack.Source{}, func(int) bootenv.DMI {
		return bootenv.DMI{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova"}
	}, openstackTree, 1+openstack.DefaultReadRetries)
}

// openstackTree is instance i's Nova metadata tree (one dated version).
func openstackTree(i int) map[string]string {
	md, _ := json.MarshalIndent(map[string]any{
		"uuid": instanceID(i), "hostname": fmt.Sprintf("fleet-%04d.example.internal", i), "name": fmt.Sprintf("fleet-%04d", i),
		"launch_index": 0, "availability_zone": "az-1", "project_id": "4b1c6e0f9a2d4e7b8c3f5a6d7e8f9a0b",
		"public_keys": map[string]string{"fleet": fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fleet-%04d\n", i)},
		"meta":        map[string]string{"role": "worker"},
	}, "", "  ")
	mac := fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)
	nd, _ := json.MarshalIndent(map[string]any{
		"links":    []any{map[string]any{"id": "tap0", "type": "ovs", "mtu": 1450, "ethernet_mac_address": mac}},
		"networks": []any{map[string]any{"id": "network0", "type": "ipv4_dhcp", "link": "tap0"}},
		"services": []any{},
	}, "", " ")
	v := "openstack/2018-08-27/"
	return map[string]string{
		v + "meta_data.json":    string(md),
		v + "user_data":         userData(i),
		v + "network_data.json": string(nd),
		v + "vendor_data.json":  "{}",
		v + "vendor_data2.json": "{}",
	}
}

// TestFleetNoCloudNet: instances run nocloud.Source with a
// `ds=nocloud-net;s=http://127.0.0.1:PORT/<iid>/` command line against a
// plain net/http FileServer behind the same fault injection.
func TestFleetNoCloudNet(t *testing.T) {
	cfg := fleetSettings(t)
	dir := treeDir(t)
	writeTrees(t, cfg.instances+1, func(i int) (string, map[string]string) {
		return filepath.Join(dir, instanceID(i)), map[string]string{
			"meta-data":      fmt.Sprintf("instance-id: %s\nlocal-hostname: fleet-%04d\n", instanceID(i), i),
			"user-data":      userData(i),
			"network-config": "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n",
		}
	})
	var mu sync.Mutex
	per := map[string]int{}
	var total atomic.Int64
	counting := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			mu.Lock()
			per[host]++
			mu.Unlock()
			total.Add(1)
			next.ServeHTTP(w, r)
		})
	}
	serveSeed := func(f Faults) (string, *FaultHandler) {
		fh := WithFaults(http.FileServer(http.Dir(dir)), f)
		ln, err := Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: counting(fh), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close() })
		return "http://" + ln.Addr().String(), fh
	}
	get := func(base string) func(ctx context.Context, i int) (*datasource.Data, error) {
		return func(ctx context.Context, i int) (*datasource.Data, error) {
			hc, done := instanceHTTP(instanceAddr(i))
			defer done()
			env := datasource.Env{
				NetworkUp: true,
				HTTP:      hc,
				Cmdline:   bootenv.ParseCmdline(fmt.Sprintf("root=/dev/vda1 ds=nocloud-net;s=%s/%s/", base, instanceID(i))),
			}
			return (&nocloud.Source{}).Get(ctx, env)
		}
	}
	calmURL, _ := serveSeed(Faults{})
	b, _ := fleetRun(1, 1, func(ctx context.Context, _ int) (*datasource.Data, error) {
		return get(calmURL)(ctx, cfg.instances)
	})
	if b[0].err != nil {
		t.Fatalf("fault-free boot: %v", b[0].err)
	}
	baseline := int(total.Load())
	url, fh := serveSeed(cfg.faults)
	boots, wall := fleetRun(cfg.instances, cfg.concurrency, get(url))
	counts := make([]int, cfg.instances)
	for i := range counts {
		counts[i] = per[instanceAddr(i)]
	}
	// NoCloud retries within its budget (no retry count): the bound is
	// the attempts its backoff allows in nocloud.DefaultBudget.
	checkFleet(t, "nocloud-net", cfg, boots, wall, counts, baseline, attemptsWithin(nocloud.DefaultBudget), fh.Stats())
}
