package netconfig

import (
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cloudCase is the options.json of a testdata/cloud/<cloud>/<case>/
// directory (all fields optional).
type cloudCase struct {
	PrimaryMAC    string `json:"primary_mac"`
	PrimaryOnly   bool   `json:"primary_only"`
	PolicyRouting bool   `json:"policy_routing"`
	// Gateways are EC2 secondary NIC gateways by interface name.
	Gateways map[string]string `json:"gateways"`
	// ConfigureSecondary is Oracle's configure_secondary_nics.
	ConfigureSecondary bool `json:"configure_secondary_nics"`
}

// cloudConverters convert a case's metadata.json for each cloud directory
// under testdata/cloud.
var cloudConverters = map[string]func(md []byte, c cloudCase, links Links) (*Config, error){
	"ec2": func(md []byte, c cloudCase, links Links) (*Config, error) {
		var macs map[string]any
		if err := json.Unmarshal(md, &macs); err != nil {
			return nil, err
		}
		opts := EC2Options{PrimaryOnly: c.PrimaryOnly, PolicyRouting: c.PolicyRouting}
		if c.Gateways != nil {
			opts.Gateway = func(nic string) (netip.Addr, bool) {
				a, err := netip.ParseAddr(c.Gateways[nic])
				return a, err == nil
			}
		}
		return ConvertEC2(macs, c.PrimaryMAC, opts, links)
	},
	"digitalocean": jsonConverter(ConvertDigitalOcean),
	"hetzner":      jsonConverter(ConvertHetzner),
	"vultr":        jsonConverter(ConvertVultr),
}

// jsonConverter adapts a converter of a whole metadata document.
func jsonConverter(conv func(map[string]any, Links) (*Config, error)) func([]byte, cloudCase, Links) (*Config, error) {
	return func(md []byte, _ cloudCase, links Links) (*Config, error) {
		var m map[string]any
		if err := json.Unmarshal(md, &m); err != nil {
			return nil, err
		}
		return conv(m, links)
	}
}

// TestCloudGolden converts every testdata/cloud/<cloud>/<case>/metadata.json
// with the cloud's converter and compares the netplan rendering with
// want.v2.yaml and the warnings with WARNINGS.
func TestCloudGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "cloud", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cloud cases")
	}
	for _, dir := range dirs {
		cloud := filepath.Base(filepath.Dir(dir))
		conv, ok := cloudConverters[cloud]
		if !ok {
			t.Errorf("%s: no converter for %s", dir, cloud)
			continue
		}
		t.Run(cloud+"/"+filepath.Base(dir), func(t *testing.T) {
			md, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c cloudCase
			if b, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatalf("options.json: %v", err)
				}
			}
			cfg, err := conv(md, c, readMACs(t, filepath.Join(dir, "macs.txt")))
			got := map[string]string{}
			if err != nil {
				got["ERROR"] = err.Error() + "\n"
			} else {
				out, err := RenderNetplan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				data := out.Files[NetplanPath].Data
				got["want.v2.yaml"] = string(data)
				if _, err := Parse(data, nil); err != nil {
					t.Errorf("netplan output does not parse back: %v", err)
				}
				if len(cfg.Warnings) > 0 {
					got["WARNINGS"] = strings.Join(cfg.Warnings, "\n") + "\n"
				}
				renderAll(t, cfg)
			}
			compareFiles(t, dir, got, []string{"want.v2.yaml", "WARNINGS", "ERROR"})
		})
	}
}

// compareFiles compares (or with -update rewrites) the named files of dir
// with got; a name missing from got must not exist.
func compareFiles(t *testing.T, dir string, got map[string]string, names []string) {
	t.Helper()
	for _, name := range names {
		p := filepath.Join(dir, name)
		g, has := got[name]
		if golden.Update() {
			if has {
				if err := os.WriteFile(p, []byte(g), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				os.Remove(p)
			}
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil && has {
			t.Errorf("%s: %v (run with -update)", p, err)
			continue
		}
		if diff := cmp.Diff(string(b), g); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", p, diff)
		}
	}
}

func seedCloud(f *testing.F, cloud string) {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "cloud", cloud, "*", "metadata.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// fuzzCloudMACs resolve the MACs the cloud fixtures use.
var fuzzCloudMACs = MACs{
	"0a:1b:2c:3d:4e:5f": "eth0", "0a:1b:2c:3d:4e:60": "eth1", "0a:1b:2c:3d:4e:61": "eth2",
}

func FuzzConvertEC2(f *testing.F) {
	seedCloud(f, "ec2")
	f.Fuzz(func(t *testing.T, data []byte) {
		var macs map[string]any
		if json.Unmarshal(data, &macs) != nil {
			return
		}
		for _, opts := range []EC2Options{{}, {PolicyRouting: true}, {PrimaryOnly: true}} {
			cfg, err := ConvertEC2(macs, "0a:1b:2c:3d:4e:5f", opts, fuzzCloudMACs)
			if err != nil {
				continue
			}
			renderAll(t, cfg)
		}
	})
}

func fuzzJSONConverter(f *testing.F, cloud string, conv func(map[string]any, Links) (*Config, error)) {
	seedCloud(f, cloud)
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return
		}
		cfg, err := conv(m, fuzzCloudMACs)
		if err != nil {
			return
		}
		renderAll(t, cfg)
	})
}

func FuzzConvertDigitalOcean(f *testing.F) { fuzzJSONConverter(f, "digitalocean", ConvertDigitalOcean) }

func FuzzConvertHetzner(f *testing.F) { fuzzJSONConverter(f, "hetzner", ConvertHetzner) }

func FuzzConvertVultr(f *testing.F) { fuzzJSONConverter(f, "vultr", ConvertVultr) }
