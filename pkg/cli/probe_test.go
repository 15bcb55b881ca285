package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/imdsserve"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

func probeEnvForTest(t *testing.T) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	return &Env{Root: t.TempDir(), Stdout: &out, Stderr: &errb, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &out, &errb
}

func decodeProbe(t *testing.T, out *bytes.Buffer) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("probe output is not JSON: %v\n%s", err, out)
	}
	return m
}

func field(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func TestProbeEc2Simulator(t *testing.T) {
	for _, tc := range []struct {
		name, instanceID, cloud string
		requireToken            bool
	}{
		{"aws-imdsv2", "i-0c1d2e3f4a5b6c7d8", "unknown", true},
		{"ec2like-imdsv1", "", "unknown", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := filepath.Join("..", "datasource", "ec2", "testdata", tc.name, "tree")
			srv, err := imdsserve.New(imdsserve.Options{Cloud: imdsserve.CloudEC2, Dir: tree, RequireToken: tc.requireToken})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			hs := httptest.NewServer(srv)
			defer hs.Close()
			env, out, errb := probeEnvForTest(t)
			if code := Run(context.Background(), env, []string{"probe", "--datasource", "ec2", "--metadata-url", hs.URL, "--timeout", "5s"}); code != 0 {
				t.Fatalf("exit %d\n%s", code, errb)
			}
			m := decodeProbe(t, out)
			want := tc.instanceID
			if want == "" {
				b, err := os.ReadFile(findFile(t, tree, "instance-id"))
				if err != nil {
					t.Fatal(err)
				}
				want = strings.TrimSpace(string(b))
			}
			if got := field(m, "v1", "instance_id"); got != want {
				t.Errorf("v1.instance_id = %v, want %s", got, want)
			}
			if got := field(m, "v1", "platform"); got != "ec2" {
				t.Errorf("v1.platform = %v", got)
			}
			if got := field(m, "ds", "meta_data", "instance-id"); got != want {
				t.Errorf("ds.meta_data.instance-id = %v", got)
			}
			ud, err := os.ReadFile(findFile(t, tree, "user-data"))
			if dec, derr := base64.StdEncoding.DecodeString(string(ud)); derr == nil {
				ud = dec // Ec2 decodes strict base64, as cloud-init's maybe_b64decode
			}
			if err == nil {
				if got := field(m, "userdata"); got != string(ud) {
					t.Errorf("userdata = %q, want %q", got, ud)
				}
			}
			if _, ok := m["vendordata"]; !ok {
				t.Error("no vendordata key")
			}
			if srv.Count("PUT", imdsserve.TokenPath) == 0 {
				t.Error("no IMDSv2 token asked for")
			}
		})
	}
}

// findFile finds the first file named name under dir (the API version
// directory differs per tree).
func findFile(t *testing.T, dir, name string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && found == "" && !d.IsDir() && d.Name() == name {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no %s under %s", name, dir)
	}
	return found
}

func TestProbeNoCloudSeedDir(t *testing.T) {
	env, out, errb := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--datasource", "NoCloud", "--seed", "testdata/probe/nocloud"}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	m := decodeProbe(t, out)
	for _, c := range []struct {
		keys []string
		want any
	}{
		{[]string{"v1", "instance_id"}, "iid-probe-nocloud"},
		{[]string{"v1", "local_hostname"}, "probehost"},
		{[]string{"v1", "platform"}, "nocloud"},
		{[]string{"v1", "subplatform"}, "seed-dir (/var/lib/cloud/seed/nocloud)"},
		{[]string{"ds", "meta_data", "local-hostname"}, "probehost"},
		{[]string{"userdata"}, "#cloud-config\nruncmd: [[echo, hi]]\n"},
		{[]string{"vendordata"}, "#cloud-config\npackages: [htop]\n"},
		{[]string{"network_config", "version"}, float64(2)},
	} {
		if got := field(m, c.keys...); got != c.want {
			t.Errorf("%s = %#v, want %#v", strings.Join(c.keys, "."), got, c.want)
		}
	}
}

func TestProbeNoCloudRootAndImage(t *testing.T) {
	// --seed as a root holding the seed directory.
	root := t.TempDir()
	sd := filepath.Join(root, "var", "lib", "cloud", "seed", "nocloud-net")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sd, "meta-data"), []byte("instance-id: iid-root\n"), 0o644)
	os.WriteFile(filepath.Join(sd, "user-data"), []byte(""), 0o644)
	env, out, errb := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--datasource", "nocloud", "--seed", root}); code != 0 {
		t.Fatalf("root: exit %d\n%s", code, errb)
	}
	if got := field(decodeProbe(t, out), "v1", "instance_id"); got != "iid-root" {
		t.Errorf("root: instance_id %v", got)
	}

	// --seed as an image `seed make` wrote.
	for _, f := range []seed.Format{seed.FormatISO, seed.FormatVFAT} {
		img := filepath.Join(t.TempDir(), "seed.img")
		if err := seed.Write(img, f, seed.Files{MetaData: []byte("instance-id: iid-img\nlocal-hostname: imghost\n"), UserData: []byte("#!/bin/sh\n")}); err != nil {
			t.Fatal(err)
		}
		env, out, errb := probeEnvForTest(t)
		if code := Run(context.Background(), env, []string{"probe", "--datasource", "NoCloud", "--seed", img}); code != 0 {
			t.Fatalf("%s: exit %d\n%s", f, code, errb)
		}
		m := decodeProbe(t, out)
		if got := field(m, "v1", "instance_id"); got != "iid-img" {
			t.Errorf("%s: instance_id %v", f, got)
		}
		if got := field(m, "v1", "subplatform"); got != "config-disk ("+img+")" {
			t.Errorf("%s: subplatform %v", f, got)
		}
	}
}

func TestProbeBinaryUserData(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "meta-data"), []byte("instance-id: i-bin\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "user-data"), []byte{0x1f, 0x8b, 0xff, 0x00}, 0o644)
	env, out, errb := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--datasource", "NoCloud", "--seed", dir}); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	m := decodeProbe(t, out)
	if got := field(m, "userdata"); got != "H4v/AA==" {
		t.Errorf("userdata %#v", got)
	}
	if keys, _ := m["base64_encoded_keys"].([]any); len(keys) != 1 || keys[0] != "userdata" {
		t.Errorf("base64_encoded_keys %#v", m["base64_encoded_keys"])
	}
}

func TestProbeNotFound(t *testing.T) {
	// Nothing in an empty root.
	env, out, errb := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--datasource", "NoCloud"}); code != 1 {
		t.Errorf("NoCloud in an empty root: exit %d\n%s", code, errb)
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "not found") {
		t.Errorf("stdout %q stderr %q", out, errb)
	}

	// A metadata service that is not there (a closed loopback port).
	hs := httptest.NewServer(nil)
	url := hs.URL
	hs.Close()
	env, out, errb = probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--datasource", "Ec2", "--metadata-url", url, "--timeout", "3s"}); code != 1 {
		t.Errorf("Ec2 at a closed port: exit %d\n%s", code, errb)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out)
	}
}

func TestProbeUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--datasource"},
		{"--datasource", "Nope"},
		{"--datasource", "Ec2", "extra"},
		{"--datasource", "Ec2", "--timeout", "soon"},
		{"--datasource", "Ec2", "--timeout", "-1s"},
		{"--datasource", "Ec2", "--metadata-url", "ftp://x"},
		{"--datasource", "NoCloud", "--seed", "testdata/probe/missing"},
		{"--bogus"},
	} {
		env, _, errb := probeEnvForTest(t)
		if code := Run(context.Background(), env, append([]string{"probe"}, args...)); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errb)
		}
	}
	env, out, _ := probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--help"}); code != 0 || !strings.Contains(out.String(), "Ec2") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestMountFS(t *testing.T) {
	m := mountFS{at: "var/lib/cloud/seed/nocloud", fsys: os.DirFS("testdata/probe/nocloud")}
	if err := fstest.TestFS(m, "var/lib/cloud/seed/nocloud/meta-data", "var/lib/cloud/seed/nocloud/user-data"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"etc", "var/lib/cloud/seed/nocloud-net", "var/lib/x", "/var", "var/../etc"} {
		if _, err := m.Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// TestProbeAzureSimulatorWithDMI: --dmi makes the Azure simulator's
// platform check pass on any machine; without it the source is not found.
func TestProbeAzureSimulatorWithDMI(t *testing.T) {
	tree := filepath.Join("..", "datasource", "azure", "testdata", "extended", "tree")
	srv, err := imdsserve.New(imdsserve.Options{Cloud: imdsserve.CloudAzure, Dir: tree})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	env, out, errb := probeEnvForTest(t)
	args := []string{"probe", "--datasource", "azure", "--metadata-url", hs.URL, "--timeout", "5s"}
	if code := Run(context.Background(), env, args); code != 1 || !strings.Contains(errb.String(), "chassis_asset_tag") {
		t.Fatalf("without --dmi: exit %d, stderr %s", code, errb)
	}
	env, out, errb = probeEnvForTest(t)
	if code := Run(context.Background(), env, append(args, "--dmi", "chassis_asset_tag=7783-7084-3265-9085-8269-3286-77")); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	m := decodeProbe(t, out)
	if got := field(m, "v1", "platform"); got != "azure" {
		t.Errorf("v1.platform = %v", got)
	}
	if got := field(m, "v1", "instance_id"); got == nil || got == "" {
		t.Errorf("v1.instance_id = %v", got)
	}

	env, _, errb = probeEnvForTest(t)
	if code := Run(context.Background(), env, []string{"probe", "--datasource", "azure", "--dmi", "cpu=1"}); code != 2 || !strings.Contains(errb.String(), "chassis_asset_tag") {
		t.Errorf("bad --dmi: exit %d, stderr %s", code, errb)
	}
}
