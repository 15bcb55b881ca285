package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     installedConfig
		err      string
	}{
		{name: "plain", in: "# comment\n\nPROFILE=minimal\nCOMPRESS=zstd\n", want: installedConfig{Profile: "minimal", Compress: "zstd", Sources: []string{"f"}}},
		{name: "quoted", in: "PROFILE=\"generic\"\nPROGRAMS='/usr/sbin/lvm /sbin/mdadm'\n", want: installedConfig{Profile: "generic", Programs: []string{"/usr/sbin/lvm", "/sbin/mdadm"}, Sources: []string{"f"}}},
		{name: "unknown key", in: "PROFILE=cloud\nMODULES=most\n", err: `f:2: unknown key "MODULES"`},
		{name: "no equals", in: "PROFILE cloud\n", err: `f:1: want KEY=VALUE`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c installedConfig
			err := parseConf(&c, "f", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, c); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
		})
	}
}

// fakeInstalledRoot lays out what cloudroot's package and a kernel package
// install: the init, a profile, the conf files, lib/modules/VERSION (the
// initramfs package's fake module tree).
func fakeInstalledRoot(t *testing.T, confs map[string]string) string {
	t.Helper()
	root := t.TempDir()
	kmod, err := filepath.Abs("../../initramfs/testdata/kmod")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		installedInit: "#!/bin/sh\necho init\n",
		filepath.Join(installedProfiles, "tiny.txt"):   "virtio_blk\next4\n",
		filepath.Join(installedProfiles, "cloud.txt"):  "virtio_blk\n",
		filepath.Join(installedProfiles, "broken.txt"): "no_such_module\n",
	}
	for p, s := range confs {
		files[p] = s
	}
	for p, s := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "lib/modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(kmod, filepath.Join(root, "lib/modules/6.1.0-test")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestInstalledBuild(t *testing.T) {
	for _, tc := range []struct {
		name    string
		confs   map[string]string
		version string
		profile string // want
		err     string
	}{
		{name: "package default", version: "6.1.0-test", profile: "cloud"},
		{name: "conf", version: "6.1.0-test", confs: map[string]string{installedConf: "PROFILE=tiny\nCOMPRESS=none\n"}, profile: "tiny"},
		{name: "image override wins", version: "6.1.0-test", confs: map[string]string{
			installedConf: "PROFILE=broken\n", installedConfDir + "/50-image.conf": "PROFILE=tiny\n",
		}, profile: "tiny"},
		{name: "no such kernel", version: "9.9.9", err: "kernel 9.9.9: no depmod'ed"},
		{name: "no version", err: "needs -kernel-version"},
		{name: "a module missing fails the build", version: "6.1.0-test", confs: map[string]string{installedConf: "PROFILE=broken\n"}, err: "no_such_module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeInstalledRoot(t, tc.confs)
			cfg := config{installed: true, installedRoot: root, version: tc.version, compress: "gzip"}
			_, err := applyInstalled(&cfg, map[string]bool{})
			if err == nil {
				err = run(context.Background(), cfg, io.Discard, io.Discard)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if _, err := os.Stat(filepath.Join(root, "boot/initrd.img-"+tc.version)); err == nil {
					t.Errorf("a failed build left /boot/initrd.img-%s", tc.version)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.profile != tc.profile {
				t.Errorf("profile %q, want %q", cfg.profile, tc.profile)
			}
			fi, err := os.Stat(filepath.Join(root, "boot/initrd.img-"+tc.version))
			if err != nil || fi.Size() == 0 {
				t.Fatalf("no initramfs written: %v", err)
			}
		})
	}
}
