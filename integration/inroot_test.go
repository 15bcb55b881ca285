package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// inRootFacts runs once per boot after cloudroot-final (a unit the first
// boot's runcmd enables) and records what the in-root checks need, then
// powers off.
const inRootFacts = `#!/bin/sh
base=/var/lib/cloudroot-inroot
n=$(ls -d $base/boot* 2>/dev/null | wc -l)
d=$base/boot$((n + 1))
mkdir -p $d
cloud-init status --long >$d/status.txt 2>&1
cp /run/cloud-init/status.json /run/cloud-init/result.json $d/ 2>/dev/null
ls /var/lib/cloud/instances >$d/instances.txt 2>&1
cat /proc/cmdline >$d/cmdline.txt
systemctl show -p Id -p ActiveState -p Result -p ConditionResult cloudroot-local.service cloudroot-network.service cloudroot-config.service cloudroot-final.service >$d/units.txt 2>&1
systemctl show -p ExecMainStartTimestampMonotonic -p ExecMainExitTimestampMonotonic cloudroot-local.service cloudroot-network.service cloudroot-config.service cloudroot-final.service >$d/unit-times.txt 2>&1
systemd-analyze >$d/analyze.txt 2>&1
systemd-analyze blame 2>&1 | head -n 15 >$d/blame.txt
systemd-analyze critical-chain cloudroot-final.service >$d/chain.txt 2>&1
grep -E "in-root|mode" /var/log/cloud-init.log >$d/log-mode.txt 2>&1
sync
systemctl poweroff --no-block
`

const inRootUserData = `#cloud-config
hostname: inrooted
users:
  - default
  - name: carol
    lock_passwd: true
    ssh_authorized_keys: [ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIInRootInRootInRootInRootInRootInRootInRoot0 carol@test]
write_files:
  - path: /usr/local/sbin/cloudroot-inroot-facts
    permissions: "0755"
    content: |
      {{FACTS}}
  - path: /etc/systemd/system/cloudroot-inroot-facts.service
    content: |
      [Unit]
      # No default dependencies: multi-user.target would be ordered after
      # it, and cloudroot-final is after multi-user.target.
      DefaultDependencies=no
      After=cloudroot-final.service
      [Service]
      Type=oneshot
      ExecStart=/usr/local/sbin/cloudroot-inroot-facts
      [Install]
      WantedBy=multi-user.target
bootcmd:
  - echo boot >>/var/lib/cloudroot-inroot-bootcmd
runcmd:
  - echo once >>/var/lib/cloudroot-inroot-runcmd
  - systemctl enable cloudroot-inroot-facts.service
  - systemctl start --no-block cloudroot-inroot-facts.service
`

// TestDebianInRoot boots one copy of build/debian-12.img twice with a
// NoCloud seed. First with Debian's own initramfs-tools initrd for the image's
// kernel (build/debian-12.initramfs-tools.initrd, which `just debian-image`
// builds in the image's root before cloudroot's package replaces
// initramfs-tools): no cloudroot
// initramfs ran, so cloudroot-local.service provisions the instance in the
// root (mode in-root in status --long, status.json and cloud-init.log).
// Then from the disk by itself (GRUB, cloudroot's initramfs): the instance
// is known, nothing per-instance runs again (runcmd once, bootcmd twice),
// there is one instance directory, and the mode is initramfs.
func TestDebianInRoot(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	img := filepath.Join(a.Dir, "debian-12.img")
	initrd := filepath.Join(a.Dir, "debian-12.initramfs-tools.initrd")
	for _, p := range []string{img, initrd} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			msg := "no " + p + " (`just debian-image` builds both)"
			if os.Getenv(EnvIntegration) == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(img, v.disk); err != nil {
		t.Fatal(err)
	}
	ud := strings.Replace(inRootUserData, "{{FACTS}}", strings.ReplaceAll(strings.TrimSpace(inRootFacts), "\n", "\n      "), 1)
	seed := v.seed(map[string][]byte{
		"meta-data": []byte("instance-id: iid-inroot\n"),
		"user-data": []byte(ud),
	}, harness.SeedISO)

	start := time.Now()
	r := v.boot(harness.BootOptions{Initramfs: initrd, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: debianTimeout})
	t.Logf("boot 1 (Debian's initrd, in-root): QEMU start to exit %.1fs (%s)", time.Since(start).Seconds(), r.Accel)
	wantPoweredOff(t, r)
	start = time.Now()
	r2 := v.boot(harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: debianTimeout})
	t.Logf("boot 2 (cloudroot's initramfs): QEMU start to exit %.1fs (%s)", time.Since(start).Seconds(), r2.Accel)
	wantPoweredOff(t, r2)

	d := v.image()
	fact := func(boot, n string) string {
		t.Helper()
		s, ok := d.readOpt("/var/lib/cloudroot-inroot/" + boot + "/" + n)
		if !ok {
			t.Errorf("the guest recorded no %s/%s", boot, n)
		}
		t.Logf("%s %s:\n%s", boot, n, strings.TrimRight(s, "\n"))
		return s
	}
	t.Run("first boot in-root", func(t *testing.T) {
		st := fact("boot1", "status.txt")
		for _, want := range []string{"status: done", "mode: in-root"} {
			if !strings.Contains(st, want) {
				t.Errorf("status --long lacks %q", want)
			}
		}
		if js := fact("boot1", "status.json"); !strings.Contains(js, `"in-root"`) {
			t.Errorf("status.json does not record mode in-root")
		}
		if lg := fact("boot1", "log-mode.txt"); !strings.Contains(lg, "in-root") {
			t.Errorf("cloud-init.log does not say in-root")
		}
		if u := fact("boot1", "units.txt"); strings.Count(u, "ActiveState=active") < 4 {
			t.Errorf("the in-root units did not all run")
		}
		fact("boot1", "analyze.txt")
		fact("boot1", "unit-times.txt")
		fact("boot1", "blame.txt")
		fact("boot1", "chain.txt")
		d.wantContains("/etc/passwd", "carol:")
		d.wantContains("/home/carol/.ssh/authorized_keys", "carol@test")
		d.wantContent("/etc/hostname", "inrooted\n")
		// In-root, as cloud-init: every host key before sshd, none left
		// to cloudroot-hostkeys-background.
		for _, kt := range []string{"rsa", "ecdsa", "ed25519"} {
			d.wantMode("/etc/ssh/ssh_host_"+kt+"_key", 0o600, 0, 0)
		}
		if strings.Contains(r.Console, "left to the booted system") {
			t.Error("the in-root boot left host keys to the booted system")
		}
	})
	t.Run("second boot initramfs", func(t *testing.T) {
		st := fact("boot2", "status.txt")
		for _, want := range []string{"status: done", "mode: initramfs"} {
			if !strings.Contains(st, want) {
				t.Errorf("status --long lacks %q", want)
			}
		}
		if js := fact("boot2", "status.json"); !strings.Contains(js, `"initramfs"`) {
			t.Errorf("status.json does not record mode initramfs")
		}
		for _, block := range strings.Split(fact("boot2", "units.txt"), "\n\n") {
			if strings.Contains(block, "Id=cloudroot-local.service") && !strings.Contains(block, "ConditionResult=no") {
				t.Errorf("the in-root local unit ran after an initramfs boot:\n%s", block)
			}
		}
		fact("boot2", "analyze.txt")
		if got := strings.Fields(fact("boot2", "instances.txt")); len(got) != 1 || got[0] != "iid-inroot" {
			t.Errorf("instances: %q, want just iid-inroot", got)
		}
		d.wantContent("/var/lib/cloudroot-inroot-runcmd", "once\n")
		d.wantContent("/var/lib/cloudroot-inroot-bootcmd", "boot\nboot\n")
	})
}
