package nocloud

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

func TestSeedURLs(t *testing.T) {
	for _, tc := range []struct{ in, md, nc string }{
		{"http://10.0.0.1/seed/", "http://10.0.0.1/seed/meta-data", "http://10.0.0.1/seed/network-config"},
		{"http://10.0.0.1/seed", "http://10.0.0.1/seed/meta-data", "http://10.0.0.1/seed/network-config"},
		{"http://10.0.0.1/seed?x=1", "http://10.0.0.1/seed?x=1meta-data", "http://10.0.0.1/seed?x=1network-config"},
		{"http://10.0.0.1/%s.yaml", "http://10.0.0.1/meta-data.yaml", "http://10.0.0.1/network-config.yaml"},
	} {
		u := SeedURLs(tc.in)
		if u["meta-data"] != tc.md || u["network-config"] != tc.nc {
			t.Errorf("SeedURLs(%q) = %v", tc.in, u)
		}
	}
}

func TestNetworkSeed(t *testing.T) {
	srv := dstest.Serve(t, testtree.Dir(t, map[string]string{
		"seed/meta-data":      "instance-id: iid-net\nlocal-hostname: nethost\n",
		"seed/user-data":      "#cloud-config\nruncmd: [true]\n",
		"seed/vendor-data":    "#cloud-config\npackages: [htop]\n",
		"seed/network-config": "version: 2\nethernets:\n  eth0: {dhcp4: true}\n",
		"min/meta-data":       "instance-id: iid-min\n",
		"min/user-data":       "",
		"nouser/meta-data":    "instance-id: iid-x\n",
	}), nil)
	env := func(arg string) datasource.Env {
		return datasource.Env{NetworkUp: true, Budget: 3 * time.Second, Cmdline: bootenv.ParseCmdline("ds=nocloud-net;s=" + arg)}
	}

	d, err := (&Source{}).Get(context.Background(), env(srv.URL+"/seed/;h=override"))
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-net" || d.LocalHostname() != "override" || d.Subplatform != "seed-dir ("+srv.URL+"/seed/)" {
		t.Errorf("got iid %q host %q sub %q", d.InstanceID(), d.LocalHostname(), d.Subplatform)
	}
	if string(d.UserData) != "#cloud-config\nruncmd: [true]\n" || string(d.VendorData) != "#cloud-config\npackages: [htop]\n" {
		t.Errorf("user-data %q vendor-data %q", d.UserData, d.VendorData)
	}
	if diff := cmp.Diff(map[string]any{"version": 2, "ethernets": map[string]any{"eth0": map[string]any{"dhcp4": true}}}, d.NetworkConfig); diff != "" {
		t.Errorf("network-config (-want +got):\n%s", diff)
	}

	// vendor-data and network-config are optional; the slash is added.
	d, err = (&Source{}).Get(context.Background(), env(srv.URL+"/min"))
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-min" || d.VendorData != nil || d.NetworkConfig != nil {
		t.Errorf("minimal seed: %+v", d)
	}

	// user-data is required: the error names its URL.
	_, err = (&Source{}).Get(context.Background(), env(srv.URL+"/nouser/"))
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/nouser/user-data") || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing user-data: %v", err)
	}

	// Not up yet: ask for the network; a dead server is an error within the budget.
	e := env("http://127.0.0.1:9/seed/")
	e.NetworkUp = false
	if _, err := (&Source{}).Get(context.Background(), e); !errors.Is(err, datasource.ErrNeedNetwork) {
		t.Errorf("network down: %v", err)
	}
	e.NetworkUp, e.Budget = true, 500*time.Millisecond
	if _, err := (&Source{}).Get(context.Background(), e); err == nil || errors.Is(err, datasource.ErrNeedNetwork) {
		t.Errorf("dead seed server: %v", err)
	}
}

func TestMetaDataSeedfrom(t *testing.T) {
	srv := dstest.Serve(t, testtree.Dir(t, map[string]string{
		"s/meta-data":      "instance-id: iid-remote\nlocal-hostname: remote\nplacement: {zone: z1}\n",
		"s/user-data":      "#cloud-config\nhostname: fromremote\n",
		"s/network-config": "version: 1\nconfig: []\n",
	}), nil)
	local := "instance-id: iid-local\nseedfrom: " + srv.URL + "/s/\nplacement: {region: r1}\n"
	root := fstest.MapFS{
		"var/lib/cloud/seed/nocloud/meta-data": {Data: []byte(local)},
		"var/lib/cloud/seed/nocloud/user-data": {Data: []byte("#cloud-config\nhostname: fromlocal\n")},
		"srv/other/meta-data":                  {Data: []byte("instance-id: iid-other\nlocal-hostname: other\n")},
		"srv/other/user-data":                  {Data: []byte("#cloud-config\nhostname: fromother\n")},
	}
	env := datasource.Env{Root: root, Budget: 3 * time.Second}
	if _, err := (&Source{}).Get(context.Background(), env); !errors.Is(err, datasource.ErrNeedNetwork) {
		t.Fatalf("remote seedfrom without network: %v", err)
	}
	env.NetworkUp = true
	d, err := (&Source{}).Get(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	// Local meta-data wins key by key; user-data and network-config come
	// from the named seed.
	wantMD := map[string]any{"instance-id": "iid-local", "local-hostname": "remote", "seedfrom": srv.URL + "/s/", "dsmode": "net",
		"placement": map[string]any{"zone": "z1", "region": "r1"}}
	if diff := cmp.Diff(wantMD, d.MetaData); diff != "" {
		t.Errorf("meta-data (-want +got):\n%s", diff)
	}
	if string(d.UserData) != "#cloud-config\nhostname: fromremote\n" || d.NetworkConfig == nil {
		t.Errorf("user-data %q network %v", d.UserData, d.NetworkConfig)
	}

	// A file seedfrom needs no network.
	root["var/lib/cloud/seed/nocloud/meta-data"] = &fstest.MapFile{Data: []byte("instance-id: iid-local\nseedfrom: file:///srv/other\n")}
	d, err = (&Source{}).Get(context.Background(), datasource.Env{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if d.LocalHostname() != "other" || string(d.UserData) != "#cloud-config\nhostname: fromother\n" || d.InstanceID() != "iid-local" {
		t.Errorf("file seedfrom: host %q iid %q ud %q", d.LocalHostname(), d.InstanceID(), d.UserData)
	}

	root["var/lib/cloud/seed/nocloud/meta-data"] = &fstest.MapFile{Data: []byte("instance-id: iid-local\nseedfrom: ftp://x/\n")}
	if _, err := (&Source{}).Get(context.Background(), datasource.Env{Root: root}); err == nil || !strings.Contains(err.Error(), "ftp://x/") {
		t.Errorf("unsupported seedfrom: %v", err)
	}
}

// A slow seed server (every answer 1.5 s late, as under a boot storm) is
// waited for, not asked again: each file is requested once. With imds'
// 1 s default timeout every request was sent again while the server was
// still serving it, until the budget ran out: the seed was never read.
func TestNetworkSeedSlowServerNotRetried(t *testing.T) {
	dir := testtree.Dir(t, map[string]string{
		"seed/meta-data": "instance-id: iid-slow\n",
		"seed/user-data": "#cloud-config\n",
	})
	var mu sync.Mutex
	count := map[string]int{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count[r.URL.Path]++
		mu.Unlock()
		time.Sleep(1500 * time.Millisecond)
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	env := datasource.Env{NetworkUp: true, Cmdline: bootenv.ParseCmdline("ds=nocloud-net;s=" + srv.URL + "/seed/")}
	d, err := (&Source{}).Get(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-slow" {
		t.Errorf("instance-id %q", d.InstanceID())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, f := range []string{"meta-data", "user-data", "vendor-data", "network-config"} {
		if n := count["/seed/"+f]; n != 1 {
			t.Errorf("%s requested %d times, want 1", f, n)
		}
	}
}
