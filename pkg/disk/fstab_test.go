package disk

import (
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

type fstabCaseEnv struct {
	Devices []string          `yaml:"devices"`
	Meta    map[string]string `yaml:"meta"`
}

// fstabInputs turns a golden case's config.yaml and env.yaml into
// RenderFstab's inputs, as the mounts module does from cloud-config.
func fstabInputs(t *testing.T, dir string) (MountsConfig, DeviceEnv) {
	t.Helper()
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var env fstabCaseEnv
	if b, err := os.ReadFile(filepath.Join(dir, "env.yaml")); err == nil {
		if err := yaml.Unmarshal(b, &env); err != nil {
			t.Fatalf("%s/env.yaml: %v", dir, err)
		}
	}
	mc := MountsConfig{}
	if m, ok := cfg["mounts"].([]any); ok {
		mc.Mounts = m
	}
	if v, ok := cfg["mount_default_fields"]; ok {
		if mc.DefaultFields, err = ParseDefaultFields(v); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := ParseSwap(cfg["swap"])
	if err != nil {
		t.Fatal(err)
	}
	if sc.Enabled() {
		mc.SwapFile = sc.Filename
	}
	de := DeviceEnv{
		Meta:   func(n string) string { return env.Meta[n] },
		Exists: func(p string) bool { return slices.Contains(env.Devices, p) },
	}
	if a, ok := cfg["device_aliases"].(map[string]any); ok {
		de.Aliases = map[string]string{}
		for k, v := range a {
			de.Aliases[k] = scalar(v)
		}
	}
	return mc, de
}

func TestRenderFstabGolden(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/fstab/*")
	if len(dirs) == 0 {
		t.Fatal("no cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, _ := os.ReadFile(filepath.Join(dir, "fstab.in"))
			mc, de := fstabInputs(t, dir)
			res := RenderFstab(in, mc, de)
			wantPath := filepath.Join(dir, "want")
			if golden.Update() {
				if err := os.WriteFile(wantPath, res.Content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(res.Content)); diff != "" {
				t.Errorf("fstab (-want +got):\n%s\nnotes: %q", diff, res.Notes)
			}
			// Rendering is idempotent: the output fed back gives itself.
			again := RenderFstab(res.Content, mc, de)
			if string(again.Content) != string(res.Content) {
				t.Errorf("second run differs:\n%s", again.Content)
			}
			if res.Write && len(again.Changes) != 0 {
				t.Errorf("second run reports changes %q", again.Changes)
			}
		})
	}
}

func TestRenderFstabNotes(t *testing.T) {
	mc, de := fstabInputs(t, "testdata/fstab/user-mounts")
	res := RenderFstab([]byte("/dev/vda1 / ext4 defaults 0 1\n"), mc, de)
	want := []string{
		"mounts[5]: device /dev/vda1 is already in fstab (/dev/vda1 / ext4 defaults 0 1), entry dropped",
		"mounts[6]: not a list, ignored: not-a-list",
	}
	if diff := cmp.Diff(want, res.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/scratch", "/srv", "/nfs", "/var/log/app", "/run/tmp"}, res.Dirs); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
	mc, de = fstabInputs(t, "testdata/fstab/missing-devices")
	res = RenderFstab(nil, mc, de)
	if res.Write || len(res.Notes) != 3 || !strings.Contains(res.Notes[0], "ephemeral1 does not exist") {
		t.Errorf("missing devices: %+v", res)
	}
}

func TestSuggestedSwapSize(t *testing.T) {
	const gb = 1 << 30
	for _, tc := range []struct{ mem, max, avail, want int64 }{
		{2 * gb, 0, -1, 2 * gb},
		{8 * gb, 0, -1, 4 * gb},
		{64 * gb, 0, -1, 8 * gb},
		{8 * gb, 0, 8 * gb, 2 * gb},           // a quarter of the free space
		{8 * gb, 10 * gb, 4 * gb, 3865470566}, // 90% of the free space
		{2 * gb, 1 * gb, -1, 1 * gb},
	} {
		if got := SuggestedSwapSize(tc.mem, tc.max, tc.avail); got != tc.want {
			t.Errorf("SuggestedSwapSize(%d, %d, %d) = %d, want %d", tc.mem, tc.max, tc.avail, got, tc.want)
		}
	}
	for in, want := range map[any]int64{"512M": 512 << 20, "1.5G": 3 << 29, 1024: 1024, "10K": 10240, "7": 7} {
		if got, err := ParseHumanSize(in); err != nil || got != want {
			t.Errorf("ParseHumanSize(%v) = %d, %v", in, got, err)
		}
	}
}
