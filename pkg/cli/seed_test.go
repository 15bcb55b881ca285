package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
)

func seedProbe(t *testing.T, img string) bootenv.FS {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	fsys, err := bootenv.Probe(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

func TestSeedMake(t *testing.T) {
	for _, tc := range []struct {
		format, typ, label string
	}{{"iso", "iso9660", "cidata"}, {"vfat", "vfat", "CIDATA"}} {
		t.Run(tc.format, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "seed."+tc.format)
			env, out, errb := probeEnvForTest(t)
			args := []string{"seed", "make", "--format", tc.format,
				"--user-data", "testdata/seed/user-data", "--network-config", "testdata/seed/network-config",
				"--vendor-data", "testdata/probe/nocloud/vendor-data",
				"--instance-id", "iid-cli", "--hostname", "clihost", img}
			if code := Run(context.Background(), env, args); code != 0 {
				t.Fatalf("exit %d\n%s", code, errb)
			}
			if !strings.Contains(out.String(), "label "+tc.label) {
				t.Errorf("stdout %q", out)
			}
			if fs := seedProbe(t, img); fs.Type != tc.typ || fs.Label != tc.label {
				t.Errorf("probe: %+v", fs)
			}
			d, err := nocloud.ReadDevice(img, nocloud.Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			ud, _ := os.ReadFile("testdata/seed/user-data")
			vd, _ := os.ReadFile("testdata/probe/nocloud/vendor-data")
			if d.InstanceID() != "iid-cli" || d.LocalHostname() != "clihost" || !bytes.Equal(d.UserData, ud) || !bytes.Equal(d.VendorData, vd) || d.NetworkConfig == nil {
				t.Errorf("read back: id %q host %q ud %q vd %q net %v", d.InstanceID(), d.LocalHostname(), d.UserData, d.VendorData, d.NetworkConfig)
			}
			if _, err := exec.LookPath("blkid"); err == nil {
				b, err := exec.Command("blkid", "-p", "-s", "TYPE", "-s", "LABEL", "-o", "export", img).Output()
				if err != nil {
					t.Skipf("blkid: %v", err)
				}
				if s := string(b); !strings.Contains(s, "TYPE="+tc.typ+"\n") || !strings.Contains(s, "LABEL="+tc.label+"\n") {
					t.Errorf("blkid:\n%s", s)
				}
			}
		})
	}
}

func TestSeedMakeMetaDataFileAndStdin(t *testing.T) {
	img := filepath.Join(t.TempDir(), "seed.iso")
	old := seedInput
	defer func() { seedInput = old }()
	seedInput = strings.NewReader("#!/bin/sh\necho stdin\n")
	env, _, errb := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"seed", "make", "--meta-data", "testdata/seed/meta-data", "--user-data", "-", img}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	d, err := nocloud.ReadDevice(img, nocloud.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-from-file" || d.LocalHostname() != "filehost" || string(d.UserData) != "#!/bin/sh\necho stdin\n" {
		t.Errorf("%q %q %q", d.InstanceID(), d.LocalHostname(), d.UserData)
	}
	// Defaults: generated meta-data, empty user-data.
	img2 := filepath.Join(t.TempDir(), "seed.iso")
	env, _, errb = probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"seed", "make", img2}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	if d, err := nocloud.ReadDevice(img2, nocloud.Overrides{}); err != nil || d.InstanceID() != "iid-local01" {
		t.Errorf("defaults: %v %v", d, err)
	}
}

func TestSeedMakeErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.img")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"seed"}, 2},
		{[]string{"seed", "take", out}, 2},
		{[]string{"seed", "make"}, 2},
		{[]string{"seed", "make", out, out}, 2},
		{[]string{"seed", "make", "--format", "ext4", out}, 2},
		{[]string{"seed", "make", "--meta-data", "testdata/seed/meta-data", "--hostname", "h", out}, 2},
		{[]string{"seed", "make", "--user-data", "-", "--vendor-data", "-", out}, 2},
		{[]string{"seed", "make", "--bogus", out}, 2},
		{[]string{"seed", "make", "--hostname", "a\nb", out}, 2},
		{[]string{"seed", "make", "--user-data", filepath.Join(dir, "missing"), out}, 1},
		{[]string{"seed", "make", filepath.Join(dir, "no", "such", "dir", "out.img")}, 1},
	} {
		env, _, errb := probeEnvForTest(t)
		if code := Run(context.Background(), env, c.args); code != c.code {
			t.Errorf("%q: exit %d, want %d\n%s", c.args, code, c.code, errb)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an image was written by a failing command")
	}
	env, stdout, _ := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"seed", "make", "--help"}); code != 0 || !strings.Contains(stdout.String(), "cloud-localds") {
		t.Errorf("--help: %d %q", code, stdout)
	}
}
