package nocloud

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

var seedFiles = map[string]string{
	"meta-data":      "instance-id: iid-abc\nlocal-hostname: node1.example.com\npublic-keys:\n  - ssh-ed25519 AAAA k1\n",
	"user-data":      "#cloud-config\nhostname: h\n",
	"vendor-data":    "#cloud-config\nruncmd: [v]\n",
	"network-config": "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n",
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

func TestRead(t *testing.T) {
	d, err := Read(mapFS(seedFiles), "seed-dir (/seed)", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-abc" || d.LocalHostname() != "node1.example.com" {
		t.Errorf("iid/hostname = %q/%q", d.InstanceID(), d.LocalHostname())
	}
	if got := d.Description(); got != "DataSourceNoCloud [seed=/seed]" {
		t.Errorf("Description = %q", got)
	}
	want := map[string]any{"version": 2, "ethernets": map[string]any{"eth0": map[string]any{"dhcp4": true}}}
	if diff := cmp.Diff(want, d.NetworkConfig); diff != "" {
		t.Errorf("network-config (-want +got):\n%s", diff)
	}
	if string(d.VendorData) != seedFiles["vendor-data"] {
		t.Errorf("vendor-data = %q", d.VendorData)
	}
}

func TestReadOverridesAndDefaults(t *testing.T) {
	d, err := Read(mapFS(map[string]string{"meta-data": "", "user-data": ""}), "s", Overrides{Hostname: "fromcmd"})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "nocloud" {
		t.Errorf("default instance-id = %q, want nocloud", d.InstanceID())
	}
	if d.LocalHostname() != "fromcmd" {
		t.Errorf("hostname override = %q", d.LocalHostname())
	}
	d, err = Read(mapFS(seedFiles), "s", Overrides{InstanceID: "iid-cmdline"})
	if err != nil || d.InstanceID() != "iid-cmdline" {
		t.Errorf("instance-id override = %v, %v", d, err)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		want     string
		notFound bool
	}{
		{"no meta-data", map[string]string{"user-data": ""}, "no meta-data", true},
		{"no user-data", map[string]string{"meta-data": ""}, "no user-data", true},
		{"bad meta-data", map[string]string{"meta-data": "a: [", "user-data": ""}, "meta-data in s: line 1", false},
		{"meta-data list", map[string]string{"meta-data": "- a", "user-data": ""}, "expected a mapping", false},
		{"bad network-config", map[string]string{"meta-data": "", "user-data": "", "network-config": "{"}, "network-config in s", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(mapFS(tc.files), "s", Overrides{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) != tc.notFound {
				t.Errorf("ErrNotFound = %v, want %v", !tc.notFound, tc.notFound)
			}
		})
	}
}

func TestNetworkConfigWrapped(t *testing.T) {
	d, err := Read(mapFS(map[string]string{"meta-data": "", "user-data": "", "network-config": "network:\n  version: 1\n  config: []\n"}), "s", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if d.NetworkConfig["version"] != 1 {
		t.Errorf("unwrapped network config = %v", d.NetworkConfig)
	}
}

// TestReadDevice reads seeds from real ISO9660 and FAT images, as made by
// the tools users make them with, through go-diskfs.
func TestReadDevice(t *testing.T) {
	src := t.TempDir()
	for k, v := range seedFiles {
		if err := os.WriteFile(filepath.Join(src, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"meta-data", "user-data", "vendor-data", "network-config"}
	images := map[string]func(out string) *exec.Cmd{
		"iso9660": func(out string) *exec.Cmd {
			args := append([]string{"-quiet", "-V", "cidata", "-r", "-J", "-o", out}, names...)
			c := exec.Command("genisoimage", args...)
			c.Dir = src
			return c
		},
		"vfat": func(out string) *exec.Cmd {
			script := "truncate -s 2M " + out + " && mkfs.vfat -n CIDATA " + out + " >/dev/null && mcopy -oi " + out + " " + strings.Join(names, " ") + " ::/"
			c := exec.Command("sh", "-c", script)
			c.Dir = src
			c.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/sbin:/sbin")
			return c
		},
	}
	for kind, mk := range images {
		t.Run(kind, func(t *testing.T) {
			tool := map[string]string{"iso9660": "genisoimage", "vfat": "mcopy"}[kind]
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s not installed", tool)
			}
			out := filepath.Join(t.TempDir(), "seed.img")
			if b, err := mk(out).CombinedOutput(); err != nil {
				t.Skipf("making %s image: %v: %s", kind, err, b)
			}
			d, err := ReadDevice(out, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID() != "iid-abc" || string(d.UserData) != seedFiles["user-data"] {
				t.Errorf("read %s: iid=%q user-data=%q", kind, d.InstanceID(), d.UserData)
			}
			if !strings.Contains(d.Subplatform, out) {
				t.Errorf("subplatform %q does not name the device", d.Subplatform)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(seedFiles["meta-data"]), []byte(seedFiles["network-config"]))
	f.Add([]byte("instance-id: [1"), []byte("network: {version: 1}"))
	f.Add([]byte("{}"), []byte(""))
	f.Fuzz(func(t *testing.T, md, nc []byte) {
		d, err := Parse(map[string][]byte{"meta-data": md, "user-data": nil, "network-config": nc}, "s", Overrides{})
		if err != nil {
			return
		}
		_ = d.InstanceID()
		_ = d.LocalHostname()
		_ = d.Description()
	})
}
