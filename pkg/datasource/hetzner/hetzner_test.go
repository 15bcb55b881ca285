package hetzner

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

func env(base, serial string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second, DMI: bootenv.DMI{SysVendor: "Hetzner", ProductSerial: serial},
		Config: map[string]any{"Hetzner": map[string]any{
			"metadata_url": base + "/hetzner/v1/metadata",
			"userdata_url": base + "/hetzner/v1/userdata",
		}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal": {"found": "cloudroot reads a service without /private-networks (none); cloud-init's get_metadata raises and the datasource fails"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				Serial string `json:"serial"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), nil)
			d, err := (&Source{}).Get(context.Background(), env(srv.URL, spec.Serial))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
		})
	}
}

// TestNetworkConfig: network-config is handed on with the private
// network appended, and it is what ConvertHetzner makes of the metadata.
func TestNetworkConfig(t *testing.T) {
	srv := dstest.Serve(t, "testdata/private-networks/tree", nil)
	d, err := (&Source{}).Get(context.Background(), env(srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	if d.NetworkConfig["version"] != 1 {
		t.Fatalf("network config %v is not v1", d.NetworkConfig)
	}
	macs := netconfig.MACs{"96:00:01:02:03:0a": "eth0", "86:00:00:0a:0b:0c": "eth1"}
	conv, err := netconfig.ConvertHetzner(d.MetaData, macs)
	if err != nil {
		t.Fatalf("ConvertHetzner: %v", err)
	}
	if conv.Interface("eth1") == nil {
		t.Errorf("no eth1 for the private network: %+v", conv.Interfaces)
	}
	b, err := json.Marshal(d.NetworkConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := netconfig.Parse(b, macs); err != nil {
		t.Fatalf("Parse: %v", err)
	}
}

// TestConform: the cases every metadata-URL source shares, and
// Hetzner's broken services.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base, "") },
		Root:   "testdata/minimal/tree",
		Broken: []dstest.Broken{
			{Name: "bad YAML", Hook: dstest.Answer("/metadata", 200, "a: [b"), Want: "metadata: line 1"},
			{Name: "no instance-id", Hook: dstest.Answer("/metadata", 200, "hostname: h\n"), Want: "no instance-id"},
			{Name: "no hostname", Hook: dstest.Answer("/metadata", 200, "instance-id: 1\n"), Want: "no hostname"},
			{Name: "private-networks not a list", Hook: dstest.Answer("/private-networks", 200, "a: b\n"), Want: "private-networks: expected a list"},
			{Name: "userdata 503", Hook: dstest.Answer("/userdata", 503, ""), Want: "status 503"},
			{Name: "serial mismatch", Hook: func(http.ResponseWriter, *http.Request) bool { return false },
				Env: func(base string) datasource.Env { return env(base, "12") }, Want: `SMBIOS serial "12" does not match the instance-id "99"`},
		},
	})
}

func TestMaybeBase64(t *testing.T) {
	for in, want := range map[string]string{"aGk=": "hi", "hi": "hi", "aGk=\n": "aGk=\n", "": "", "#!": "#!"} {
		if got := string(MaybeBase64([]byte(in))); got != want {
			t.Errorf("MaybeBase64(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"private-networks", "minimal"} {
		md, _ := os.ReadFile(filepath.Join("testdata", c, "tree/hetzner/v1/metadata/_index"))
		pn, _ := os.ReadFile(filepath.Join("testdata", c, "tree/hetzner/v1/metadata/private-networks"))
		f.Add(md, pn)
	}
	f.Add([]byte("instance-id: [1]\nhostname: {a: b}\n"), []byte("- 1\n- {2: 3}\n"))
	f.Fuzz(func(t *testing.T, md, pn []byte) {
		d, err := Build(Input{URL: "http://x", Metadata: md, PrivateNetworks: pn, Userdata: md})
		if err != nil {
			return
		}
		if d.InstanceID() == "" || d.LocalHostname() == "" {
			t.Fatal("no instance-id or hostname")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		if _, ok := d.MetaData["vendor_data"]; ok {
			t.Fatal("vendor_data in meta-data")
		}
	})
}
