package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cleanCases are scripts/goldens/cli.sh's: name, failing clean.d part, args.
var cleanCases = []struct {
	name string
	fail bool
	args []string
}{
	{"plain", false, nil},
	{"logs", false, []string{"--logs"}},
	{"logs-seed", false, []string{"-l", "-s"}},
	{"seed-only", false, []string{"--seed"}},
	{"runparts-fail", true, []string{"--logs"}},
}

// cleanRoot builds testdata/clean/setup.sh's tree in a temp dir.
func cleanRoot(t *testing.T, fail bool) string {
	t.Helper()
	root := t.TempDir()
	cmd := exec.Command("sh", "testdata/clean/setup.sh")
	cmd.Env = append(os.Environ(), "R="+root)
	if fail {
		cmd.Env = append(cmd.Env, "CASE_FAIL=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	return root
}

func leftUnder(t *testing.T, root string, tops ...string) string {
	t.Helper()
	var left []string
	for _, top := range tops {
		filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err == nil && p != filepath.Join(root, top) {
				left = append(left, strings.TrimPrefix(p, root))
			}
			return nil
		})
	}
	sort.Strings(left)
	return strings.Join(left, "\n") + "\n"
}

// TestCleanGoldens compares clean with upstream's on the same tree
// (stdout, exit code, stderr and what is left in /var/lib/cloud and /var/log).
func TestCleanGoldens(t *testing.T) {
	for _, tc := range cleanCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata/clean", "want-"+tc.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			root := cleanRoot(t, tc.fail)
			env, out, errb := newTestEnv(root)
			code := Run(context.Background(), env, append([]string{"clean"}, tc.args...))
			got := fmt.Sprintf("%sexit: %d\n%s--- left:\n%s", out, code, errb, leftUnder(t, root, "/var/lib/cloud", "/var/log"))
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("clean %v (-upstream +cloudroot):\n%s", tc.args, diff)
			}
		})
	}
}

// TestCleanConfigs covers what the goldens cannot run upstream (it would
// touch this machine's /etc): --configs, --machine-id, --reboot.
func TestCleanConfigs(t *testing.T) {
	root := cleanRoot(t, false)
	files := map[string]string{
		"etc/netplan/50-cloud-init.yaml":                                     "n",
		"etc/netplan/01-mine.yaml":                                           "keep",
		"etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection": "n",
		"etc/systemd/network/10-cloud-init-eth0.network":                     "n",
		"etc/network/interfaces.d/50-cloud-init.cfg":                         "n",
		"etc/ssh/sshd_config.d/50-cloud-init.conf":                           "s",
		"etc/fstab":                "/dev/vda1 / ext4 defaults 0 1\n/dev/vdb /mnt auto defaults,nofail,x-systemd.after=cloud-init.service,_netdev,comment=cloudconfig 0 2\n",
		"etc/machine-id":           "0123\n",
		"run/systemd/system/.keep": "",
	}
	for p, s := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(s), 0o644)
	}
	// --reboot runs `shutdown -r now` inside the root (chroot); the temp
	// root has none, so this is the failure path: cloud-init's message, exit 1.
	env, _, errb := newTestEnv(root)
	if code := Run(context.Background(), env, []string{"clean", "--configs", "network", "ssh_config", "fstab", "--machine-id", "--reboot"}); code != 1 ||
		!strings.HasPrefix(errb.String(), "Error:\nCould not reboot this system using \"['shutdown', '-r', 'now']\": ") {
		t.Fatalf("exit %d: %q", code, errb)
	}
	for _, p := range []string{"etc/netplan/50-cloud-init.yaml", "etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection",
		"etc/systemd/network/10-cloud-init-eth0.network", "etc/network/interfaces.d/50-cloud-init.cfg", "etc/ssh/sshd_config.d/50-cloud-init.conf"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s not removed", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/netplan/01-mine.yaml")); string(b) != "keep" {
		t.Error("a file cloud-init did not write was removed")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/fstab")); string(b) != "/dev/vda1 / ext4 defaults 0 1\n" {
		t.Errorf("fstab = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/machine-id")); string(b) != "uninitialized\n" {
		t.Errorf("machine-id = %q", b)
	}

	// Without systemd the machine-id is removed; a second clean finds
	// nothing left.
	os.RemoveAll(filepath.Join(root, "run/systemd"))
	env, out, errb := newTestEnv(root)
	os.RemoveAll(filepath.Join(root, "var/lib/cloud"))
	if code := Run(context.Background(), env, []string{"clean", "--machine-id"}); code != 0 || out.String() != "Artifacts already cleaned." || errb.String() != "Artifacts already cleaned." {
		t.Errorf("second clean: exit %d out %q err %q", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/machine-id")); err == nil {
		t.Error("machine-id kept without systemd")
	}
	env, _, errb = newTestEnv(root)
	if code := Run(context.Background(), env, []string{"clean", "--configs", "bogus"}); code != 2 || !strings.Contains(errb.String(), "invalid choice: 'bogus'") {
		t.Errorf("bad --configs: exit %d %q", code, errb)
	}
}

// TestCleanNoState is clean where nothing ran (a chroot, a fresh image),
// as 26.2 answers there (testdata/inroot-nostate/clean-*/upstream.txt
// are its records in a Debian root): no /var/lib/cloud is "Artifacts
// already cleaned." and exit 0 whatever the options; with the directory,
// --configs datasource and no datasource to ask says so; a clean.d file
// that is not executable is skipped with subp's warning. There is no
// /dev/console in the temp root, so multi_log falls back to stdout.
func TestCleanNoState(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cloudDir       bool
		list           string
		args           []string
		stdout, stderr string
		machineIDGone  bool
	}{
		{name: "no state", args: nil, stdout: "Artifacts already cleaned.", stderr: "Artifacts already cleaned."},
		{name: "no state, everything", args: []string{"--logs", "--seed", "--machine-id", "--configs", "all"},
			stdout: "Artifacts already cleaned.", stderr: "Artifacts already cleaned.", machineIDGone: true},
		{name: "empty cloud dir", cloudDir: true, list: "[None]", args: []string{"--logs", "--seed", "--configs", "all"},
			stderr: "subp.py[WARNING]: skipping /etc/cloud/clean.d/README as its not executable or the underlying file system is mounted without executable permissions.\n"},
		{name: "no datasource", cloudDir: true, list: "[]", args: []string{"--configs", "datasource"},
			stdout: "No datasource found, nothing cleaned.",
			stderr: "No datasource found, nothing cleaned.<time> - subp.py[WARNING]: skipping /etc/cloud/clean.d/README as its not executable or the underlying file system is mounted without executable permissions.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "etc/cloud/clean.d"), 0o755)
			os.WriteFile(filepath.Join(root, "etc/cloud/clean.d/README"), []byte("docs\n"), 0o644)
			os.WriteFile(filepath.Join(root, "etc/machine-id"), nil, 0o444)
			if tc.list != "" {
				os.WriteFile(filepath.Join(root, "etc/cloud/cloud.cfg"), []byte("datasource_list: "+tc.list+"\n"), 0o644)
			}
			if tc.cloudDir {
				os.MkdirAll(filepath.Join(root, "var/lib/cloud"), 0o755)
			}
			env, out, errb := newTestEnv(root)
			if rc := Run(context.Background(), env, append([]string{"clean"}, tc.args...)); rc != 0 {
				t.Errorf("exit %d, want 0", rc)
			}
			stamp := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}`)
			gotErr := stamp.ReplaceAllString(errb.String(), "<time>")
			want := tc.stderr
			if strings.HasPrefix(want, "subp.py") {
				want = "<time> - " + want
			}
			if gotErr != want || out.String() != tc.stdout {
				t.Errorf("stdout %q stderr %q, want %q and %q", out, gotErr, tc.stdout, want)
			}
			if _, err := os.Stat(filepath.Join(root, "etc/machine-id")); (err != nil) != tc.machineIDGone {
				t.Errorf("/etc/machine-id: %v, want removed %v (no systemd)", err, tc.machineIDGone)
			}
		})
	}
}
