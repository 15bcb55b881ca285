package modules

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// FuzzVendorModules runs every vendor module (vendor.go's list) on any
// cloud-config (seeds: every golden case, the families' too, and the docs
// examples) against a temp-dir Ubuntu target whose commands all
// succeed: none may panic or modify the config.
func FuzzVendorModules(f *testing.F) {
	for _, g := range []string{"testdata/modgolden/*/*/config.yaml", "*/testdata/modgolden/*/*/config.yaml", "testdata/docs/*/example*.yaml"} {
		files, _ := filepath.Glob(g)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	f.Add([]byte("snap: {commands: {a: [null], b: 3}}\nlxd: {bridge: {mode: new, mtu: x}, init: 3}\nwireguard: {interfaces: [3, {}]}"))
	f.Add([]byte("rpi: {interfaces: {serial: {console: 1}}}\nubuntu_pro: {config: [], enable: 3}\nrh_subscription: {add_pool: x, username: u, password: p}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var cfg map[string]any
		if yaml.Unmarshal(b, &cfg) != nil || cfg == nil {
			return
		}
		orig := pyval.DeepCopy(cfg)
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "etc"), 0o755)
		os.WriteFile(filepath.Join(dir, "etc/os-release"), []byte("ID=ubuntu\nVERSION_ID=24.04\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\nubuntu:x:1000:1000::/home/ubuntu:/bin/sh\n"), 0o644)
		root, err := target.New(dir, target.WithRunner(modtest.NewRunner()))
		if err != nil {
			t.Fatal(err)
		}
		c := &Context{Root: root, Config: Config(cfg), Meta: map[string]any{}, InstanceID: "iid-fuzz",
			Distro: distro.Detect(root.ReadFile), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
			Console: io.Discard, Now: time.Now, Uptime: func() float64 { return 1 }, Datasource: "DataSourceEc2Local",
			Warn: func(string) {}}
		for _, m := range vendorModules() {
			_ = m.Run(t.Context(), c)
		}
		if !cmp.Equal(orig, map[string]any(cfg)) {
			t.Fatal("config modified")
		}
	})
}

// FuzzConfigObjSection: every key read from a section is in the text.
func FuzzConfigObjSection(f *testing.F) {
	b, _ := os.ReadFile("testdata/modgolden/landscape/client-conf-merge/root/etc/landscape/client.conf")
	f.Add(b)
	f.Add([]byte("[client]\nk = 'v'\n[other]\nx=\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range parseConfigObjSection(b, "client") {
			if !strings.Contains(string(b), k) {
				t.Fatalf("key %q not in the input", k)
			}
		}
	})
}
