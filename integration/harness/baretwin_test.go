package harness

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestBareTwinScript turns each seed under testdata/baretwin/<case>/ into
// its bake script and compares it with want.sh (-update rewrites it). A
// case's os-release and renderer files name the image it is baked for
// (default: Debian 12, ENI); trixie is Debian 13's netplan.
func TestBareTwinScript(t *testing.T) {
	dirs, err := filepath.Glob("testdata/baretwin/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases in testdata/baretwin: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			seed := map[string][]byte{}
			for _, f := range []string{"user-data", "meta-data", "network-config"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
					seed[f] = b
				}
			}
			osRelease, renderer := []byte("ID=debian\nVERSION_ID=\"12\"\n"), netconfig.RendererENI
			if b, err := os.ReadFile(filepath.Join(dir, "os-release")); err == nil {
				osRelease = b
			}
			if b, err := os.ReadFile(filepath.Join(dir, "renderer")); err == nil {
				renderer = strings.TrimSpace(string(b))
			}
			got, err := BareTwinScript(seed, osRelease, renderer)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "want.sh")
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(b), got); d != "" {
				t.Errorf("bake script (-want +got):\n%s", d)
			}
		})
	}
}

// TestBareTwinScriptRefuses: a key the bake does not know is an error, so
// a grown seed cannot bake a smaller end state than the others provision.
func TestBareTwinScriptRefuses(t *testing.T) {
	for name, ud := range map[string]string{
		"top-level key":    "#cloud-config\npackages: [vim]\n",
		"user key":         "#cloud-config\nusers: [{name: a, uid: 1234}]\n",
		"write_files key":  "#cloud-config\nwrite_files: [{path: /a, append: true}]\n",
		"encoding":         "#cloud-config\nwrite_files: [{path: /a, encoding: b64, content: aGk=}]\n",
		"power_state":      "#cloud-config\npower_state: {mode: suspend}\n",
		"not cloud-config": "#!/bin/sh\necho hi\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := BareTwinScript(map[string][]byte{"user-data": []byte(ud), "meta-data": []byte("instance-id: i\n")}, nil, netconfig.RendererENI)
			if err == nil || !strings.Contains(err.Error(), "bare twin") {
				t.Errorf("BareTwinScript(%q) = %v, want a bare twin error", ud, err)
			}
		})
	}
}
