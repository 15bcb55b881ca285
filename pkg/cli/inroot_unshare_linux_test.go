//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInRootUnshareChroot runs the real agent in a chroot of a minimal root
// with a NoCloud seed directory and no hand-off state, inside a user and
// mount namespace (unshare --user --map-root-user: no root-only host side
// effect; /proc and /run are mounted in the namespace only), marked as a
// systemd-nspawn container (/run/systemd/container): init --local
// provisions from the seed in the root (a user, root's key, a file),
// without looking at block devices; modules --mode config and final follow
// from the state it wrote (runcmd runs, through a static busybox as
// /bin/sh when the host has one), status --long says mode: in-root, and
// query answers from what this boot found.
// Skipped where user namespaces or the go tool are not available.
func TestInRootUnshareChroot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if out, err := exec.Command("unshare", "--user", "--map-root-user", "--mount", "true").CombinedOutput(); err != nil {
		t.Skipf("no user namespaces: %v: %s", err, out)
	}
	root := inRootFixture(t, "NoCloud, None", map[string]string{
		"var/lib/cloud/seed/nocloud/meta-data": "instance-id: iid-chroot\nlocal-hostname: chrooted\n",
		// A mapped root cannot chown to other ids: the user has no home.
		"var/lib/cloud/seed/nocloud/user-data": "#cloud-config\nusers: [{name: alice, no_create_home: true, lock_passwd: true}]\n" +
			"write_files: [{path: /etc/seeded, content: seeded}]\nssh_genkeytypes: []\n" +
			"disable_root: false\nssh_authorized_keys: [ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIContainerContainerContainerContainer00 root@seed]\n" +
			"runcmd: [[sh, -c, echo ran >/etc/runcmd-ran]]\n",
		"etc/cloud/cloud.cfg": "datasource_list: [NoCloud, None]\ncloud_config_modules: [runcmd]\ncloud_final_modules: [scripts_user]\n",
		"root/.profile":       "",
	})
	busybox := ""
	if p, err := exec.LookPath("busybox"); err == nil {
		if out, err := exec.Command("file", "-L", p).Output(); err == nil && strings.Contains(string(out), "statically linked") {
			busybox = p
		}
	}
	if busybox != "" {
		os.MkdirAll(filepath.Join(root, "bin"), 0o755)
		b, _ := os.ReadFile(busybox)
		os.WriteFile(filepath.Join(root, "bin/busybox"), b, 0o755)
		os.Symlink("busybox", filepath.Join(root, "bin/sh"))
	}
	for _, d := range []string{"usr/bin", "proc", "run", "dev"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(root, "usr/bin/cloudroot"), "github.com/cloudroot/cloudroot/cmds/cloudroot-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build the agent: %v: %s", err, out)
	}
	script := `set -e
mount -t proc proc "$R/proc"
mount -t tmpfs tmpfs "$R/run"
mkdir -p "$R/run/systemd" && echo systemd-nspawn >"$R/run/systemd/container"
mount -t tmpfs tmpfs "$R/dev"
touch "$R/dev/null" && mount --bind /dev/null "$R/dev/null"
chroot "$R" /usr/bin/cloudroot init --local
chroot "$R" /usr/bin/cloudroot modules --mode config
chroot "$R" /usr/bin/cloudroot modules --mode final
chroot "$R" /usr/bin/cloudroot status --long
chroot "$R" /usr/bin/cloudroot query ds.meta_data.local_hostname`
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "R="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in-root stages: %v\n%s", err, out)
	}
	for _, want := range []string{"status: done", "mode: in-root", "iid-chroot", "\nchrooted\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/seeded")); string(b) != "seeded" {
		t.Errorf("/etc/seeded = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/passwd")); !strings.Contains(string(b), "alice:") {
		t.Errorf("no user alice in /etc/passwd:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "root/.ssh/authorized_keys")); !strings.Contains(string(b), "root@seed") {
		t.Errorf("root's authorized_keys lacks the seed's key:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "var/log/cloud-init.log")); !strings.Contains(string(b), "running in a container") {
		t.Errorf("cloud-init.log does not say the container was detected")
	}
	if busybox != "" {
		if b, _ := os.ReadFile(filepath.Join(root, "etc/runcmd-ran")); string(b) != "ran\n" {
			t.Errorf("runcmd did not run: /etc/runcmd-ran = %q\n%s", b, out)
		}
	}
}
