package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

func tarMembers(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
		}
	}
	sort.Strings(names)
	return names
}

func TestCollectLogs(t *testing.T) {
	root := cleanRoot(t, false)
	for p, mode := range map[string]os.FileMode{
		"run/cloud-init/instance-data.json":           0o644,
		"run/cloud-init/instance-data-sensitive.json": 0o600,
		"var/lib/cloud/instances/i-1/user-data.txt":   0o600,
		"var/lib/cloud/instances/i-1/datasource":      0o644,
		"etc/cloud/cloud.cfg":                         0o644,
		"etc/cloud/keys/key.pem":                      0o644,
		"etc/cloud/templates/hosts.debian.tmpl":       0o644,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte("x\n"), mode)
		os.Chmod(filepath.Join(root, p), mode)
	}
	top := "cloud-init-logs-2026-11-22/"
	common := []string{"version", "etc/cloud/clean.d/10-ok", "etc/cloud/cloud.cfg", "etc/cloud/cloud.cfg.d/05_logging.cfg",
		"var/lib/cloud/data/instance-id", "var/lib/cloud/instance/datasource",
		"var/log/cloud-init-output.log", "var/log/cloud-init-output.log.2.gz", "var/log/cloud-init.log", "var/log/cloud-init.log.1",
		"run/cloud-init/instance-data.json"}
	for _, tc := range []struct {
		name      string
		args      []string
		extra     []string
		stderrHas []string
	}{
		{name: "default includes sensitive files", extra: []string{"run/cloud-init/instance-data-sensitive.json", "var/lib/cloud/instance/user-data.txt"},
			stderrHas: []string{"Wrote ", "WARNING:\nSensitive data may have been included"}},
		{name: "redacted", args: []string{"--redact", "-u"},
			stderrHas: []string{"The --include-userdata flag is deprecated and does nothing.\nWrote "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "logs.tgz")
			env, _, errb := newTestEnv(root)
			env.IsRoot = true
			if code := Run(context.Background(), env, append([]string{"collect-logs", "-t", out}, tc.args...)); code != 0 {
				t.Fatalf("exit %d: %s", code, errb)
			}
			var want []string
			for _, m := range append(slices.Clone(common), tc.extra...) {
				want = append(want, top+m)
			}
			sort.Strings(want)
			if got := tarMembers(t, out); !slices.Equal(got, want) {
				t.Errorf("members:\n got %v\nwant %v", got, want)
			}
			for _, s := range tc.stderrHas {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr %q lacks %q", errb, s)
				}
			}
			if tc.name == "redacted" && strings.Contains(errb.String(), "WARNING") {
				t.Errorf("redacted run warns: %q", errb)
			}
		})
	}
	env, _, errb := newTestEnv(root)
	if code := Run(context.Background(), env, []string{"collect-logs"}); code != 1 || errb.String() != "This command must be run as root.\n" {
		t.Errorf("non-root: exit %d %q", code, errb)
	}
}

// TestCollectLogsPrivateTarball is issue 25 item 8: the tarball (holding
// the 0600 user-data and instance-data-sensitive.json) was written 0644,
// into an existing file at -t, through a symlink there.
func TestCollectLogsPrivateTarball(t *testing.T) {
	root := cleanRoot(t, false)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, out, victim string)
	}{
		{"new file", func(t *testing.T, out, victim string) {}},
		{"existing 0644 file", func(t *testing.T, out, victim string) {
			if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink", func(t *testing.T, out, victim string) {
			if err := os.Symlink(victim, out); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, victim := filepath.Join(dir, "logs.tgz"), filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("victim"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, out, victim)
			env, _, errb := newTestEnv(root)
			env.IsRoot = true
			if code := Run(context.Background(), env, []string{"collect-logs", "-t", out}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb)
			}
			fi, err := os.Lstat(out)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s is %v, want a regular file -rw-------", out, fi.Mode())
			}
			if b, _ := os.ReadFile(victim); string(b) != "victim" {
				t.Errorf("the symlink's target was written: %q", b)
			}
			tarMembers(t, out)
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Errorf("temporary files left: %v", ents)
			}
		})
	}
}
