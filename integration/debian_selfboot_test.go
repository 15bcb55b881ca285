package integration

// TestDebianKernelUpgrade: the Debian image boots by itself under UEFI and
// keeps booting cloudroot's initramfs after a kernel package comes in, as
// on a cloud. Two boots of one disk, with a NoCloud seed and a signed apt
// repository on 127.0.0.1 holding a second linux-image version:
//
//  1. OVMF (no NVRAM: the firmware finds GRUB at the ESP's removable path
//     \EFI\BOOT\BOOTX64.EFI): the instance is provisioned; runcmd installs
//     the other kernel with apt-get — the package's kernel hook builds its
//     cloudroot initrd, zz-update-grub writes GRUB's menu (pointed at the new
//     kernel by /etc/default/grub.d, the second version being older than the
//     image's) — and a per-boot script powers off once status is done.
//  2. SeaBIOS: GRUB boots the new kernel; its console shows cloudroot's
//     init-local stage (the initramfs ran), the per-boot bootcmd and script
//     record the new kernel, status is done. Then, as a user or a package
//     would: cloudroot's update-initramfs -u -k all and the update-initramfs
//     dpkg trigger rebuild both kernels' initrds (copies kept: both are
//     cloudroot's, its /init, no initramfs-tools scripts); and cloudroot is
//     removed as docs/distributions.md says — apt-get install --purge
//     initramfs-tools cloudroot- from the same local repository (its
//     postrm regenerates GRUB's menu), update-initramfs -u -k all — and a
//     plain systemd unit is left to record the next boot and power off.
//  3. SeaBIOS again, cloudroot and cloud-init gone: GRUB boots the new
//     kernel with initramfs-tools' initrd to the root (no init-local on the
//     console), every installed kernel has an initramfs-tools initrd.
//
// TestDebian covers the SeaBIOS first boot with the full user-data.

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// newDebianVM skips (fails under CLOUDROOT_INTEGRATION=1) without the
// Debian image, and returns a VM on a copy of it.
func newDebianVM(t *testing.T) *vm {
	t.Helper()
	a := artifacts(t)
	if fi, err := os.Stat(a.Debian); err != nil || !fi.Mode().IsRegular() {
		msg := "no " + a.Debian + " (build it with `just debian-image`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(a.Debian, v.disk); err != nil {
		t.Fatal(err)
	}
	return v
}

// upgradeKernel is the second kernel the guest installs: bookworm's own,
// where the image carries bookworm-security's (scripts/kernel.sh takes the
// candidate).
const upgradeKernel = "6.1.0-50-amd64"

func kernelUpgradeUserData(repo *harness.AptRepo) string {
	mirror := repo.GuestURL()
	return `#cloud-config
hostname: upgrade-test
apt:
  preserve_sources_list: false
  primary:
    - arches: [default]
      uri: ` + mirror + `
  security:
    - arches: [default]
      uri: ` + mirror + `
  sources:
    cloudroot-test.list:
      source: "deb ` + mirror + ` bookworm main"
      key: |
` + indent(repo.KeyArmored, "        ") + `
bootcmd:
  - mkdir -p /var/lib/cloudroot-test
  - uname -r >> /var/lib/cloudroot-test/bootcmd-kernels.txt
write_files:
  - path: /etc/default/grub.d/90-cloudroot-test.cfg
    content: |
      GRUB_DISABLE_SUBMENU=y
      GRUB_DEFAULT="Debian GNU/Linux, with Linux ` + upgradeKernel + `"
  - path: /usr/local/sbin/cloudroot-test-remove
    permissions: "0755"
    content: |
` + indent(removalScript, "      ") + `
  - path: /usr/local/sbin/cloudroot-test-boot3
    permissions: "0755"
    content: |
` + indent(boot3Script, "      ") + `
  - path: /var/lib/cloud/scripts/per-boot/cloudroot-test
    permissions: "0755"
    content: |
      #!/bin/sh
      out=/var/lib/cloudroot-test
      mkdir -p $out
      n=$(ls $out/boot-*.txt 2>/dev/null | wc -l)
      n=$((n + 1))
      { uname -r; cat /proc/cmdline; if [ -d /sys/firmware/efi ]; then echo uefi; else echo bios; fi; } >$out/boot-$n.txt
      systemd-run --no-block --unit=cloudroot-test-poweroff sh -c "cloud-init status --long >$out/status-$n.txt 2>&1; cloud-init status --wait >>$out/status-$n.txt 2>&1; if [ $n = 2 ]; then /usr/local/sbin/cloudroot-test-remove; fi; ls -l /boot >$out/ls-boot-$n.txt; sync; systemctl poweroff"
runcmd:
  - [sh, -c, "apt-get update >/var/lib/cloudroot-test/apt.txt 2>&1 && apt-get install -y --no-install-recommends linux-image-` + upgradeKernel + ` >>/var/lib/cloudroot-test/apt.txt 2>&1; echo rc=$? >>/var/lib/cloudroot-test/apt.txt"]
`
}

// removalScript runs at the end of boot 2, once cloudroot is done: its
// update-initramfs and dpkg trigger, copies of the initrds they made, then
// cloudroot's removal, initramfs-tools coming back from the local
// repository, and a unit for boot 3.
const removalScript = `#!/bin/sh
out=/var/lib/cloudroot-test
export DEBIAN_FRONTEND=noninteractive
stamps() { for f in /boot/initrd.img-*; do echo "$f $(stat -c %Y "$f")"; done; }
{
	stamps
	sleep 1
	update-initramfs -u -k all
	echo "update-initramfs rc=$?"
	stamps
} >$out/compat.txt 2>&1
{
	dpkg-trigger --no-await update-initramfs && dpkg --triggers-only --pending
	echo "trigger rc=$?"
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' cloudroot
} >$out/trigger.txt 2>&1
mkdir -p $out/initrds
cp /boot/initrd.img-* $out/initrds/
{
	apt-get install -y --purge --no-install-recommends initramfs-tools cloudroot-
	echo "apt rc=$?"
	update-initramfs -u -k all
	echo "update-initramfs rc=$?"
} >$out/removal.txt 2>&1
{
	for v in $(linux-version list); do
		if [ ! -e /boot/initrd.img-$v ]; then echo "$v none"; continue; fi
		lsinitramfs /boot/initrd.img-$v >$out/lsinitramfs-$v.txt 2>&1
		if grep -q scripts/init-top $out/lsinitramfs-$v.txt; then echo "$v initramfs-tools"; else echo "$v other"; fi
	done
} >$out/initrds-after.txt 2>&1
cat >/etc/systemd/system/cloudroot-test-boot3.service <<'UNIT'
[Unit]
Description=cloudroot test: record the boot after cloudroot's removal and power off
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/cloudroot-test-boot3
[Install]
WantedBy=multi-user.target
UNIT
systemctl enable cloudroot-test-boot3.service >>$out/removal.txt 2>&1
`

// boot3Script is what the unit runs in boot 3 (no cloudroot, no cloud-init).
const boot3Script = `#!/bin/sh
out=/var/lib/cloudroot-test
{
	uname -r
	cat /proc/cmdline
	command -v cloud-init || echo "no cloud-init"
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' cloudroot initramfs-tools 2>&1
	test -e /run/cloud-init/cloudroot && echo "cloudroot ran" || echo "cloudroot did not run"
} >$out/boot-3.txt 2>&1
sync
systemctl --no-block poweroff
`

// cloudrootInitrd reports whether an initrd (gzip'ed cpio) carries
// cloudroot's /init rather than initramfs-tools' scripts.
func cloudrootInitrd(b []byte) (bool, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return false, err
	}
	all, err := io.ReadAll(io.LimitReader(z, 1<<30))
	if err != nil {
		return false, err
	}
	return bytes.Contains(all, []byte("github.com/cloudroot/cloudroot")) && !bytes.Contains(all, []byte("scripts/init-top")), nil
}

func TestDebianKernelUpgrade(t *testing.T) {
	if _, err := os.Stat(harness.OVMFPath); err != nil {
		msg := "no UEFI firmware at " + harness.OVMFPath + " (Debian package ovmf; just deps)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	v := newDebianVM(t)
	needTools(t, "nc", "apt-get", "dpkg-scanpackages", "gpg")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	repo, err := harness.BuildAptRepo(ctx, harness.AptRepoOptions{
		Packages: []string{"linux-image-" + upgradeKernel, "initramfs-tools"}, Image: v.a.Debian, Dir: filepath.Join(v.dir, "repo"),
		EmptySuites: []string{"bookworm-updates", "bookworm-security", "bookworm-backports"},
		Log:         func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apt repository: %v", repo.Installs)
	srv, err := harness.ServeAptRepo(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: iid-debian-kernel-upgrade\n"),
		"user-data":      []byte(kernelUpgradeUserData(repo)),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	o := harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: 3 * debianTimeout,
		GuestFwd: []harness.GuestFwd{srv.GuestFwd()}}

	uefi := o
	uefi.Firmware = harness.OVMFPath
	r := v.boot(uefi)
	wantPoweredOff(t, r)
	wantConsole(t, r, "running 'init-local'")
	d := v.image()
	d.wantContent("/etc/hostname", "upgrade-test\n")
	boot1 := d.read("/var/lib/cloudroot-test/boot-1.txt")
	oldKernel, _, _ := strings.Cut(boot1, "\n")
	t.Logf("boot 1:\n%s", boot1)
	if !strings.HasSuffix(boot1, "uefi\n") || !strings.Contains(boot1, "BOOT_IMAGE=/boot/vmlinuz-"+oldKernel) {
		t.Errorf("boot 1 was not GRUB under UEFI:\n%s", boot1)
	}
	d.wantContains("/var/lib/cloudroot-test/status-1.txt", "status: done")
	apt := d.read("/var/lib/cloudroot-test/apt.txt")
	t.Logf("guest apt-get:\n%s", apt)
	for _, want := range []string{"cloudroot: building /boot/initrd.img-" + upgradeKernel, "rc=0"} {
		if !strings.Contains(apt, want) {
			t.Errorf("installing linux-image-%s: the output lacks %q", upgradeKernel, want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	r = v.boot(o)
	wantPoweredOff(t, r)
	wantConsole(t, r, "running 'init-local'")
	d = v.image()
	boot2 := d.read("/var/lib/cloudroot-test/boot-2.txt")
	t.Logf("boot 2:\n%s", boot2)
	if !strings.HasPrefix(boot2, upgradeKernel+"\n") || !strings.Contains(boot2, "BOOT_IMAGE=/boot/vmlinuz-"+upgradeKernel) || !strings.HasSuffix(boot2, "bios\n") {
		t.Errorf("boot 2 did not run kernel %s from GRUB under SeaBIOS:\n%s", upgradeKernel, boot2)
	}
	d.wantContent("/var/lib/cloudroot-test/bootcmd-kernels.txt", oldKernel+"\n"+upgradeKernel+"\n")
	d.wantContains("/var/lib/cloudroot-test/status-2.txt", "status: done")
	if n := strings.Count(d.read("/var/log/cloud-init.log"), "running 'init-local'"); n < 2 {
		t.Errorf("/var/log/cloud-init.log has %d init-local stages, want one per boot (2)", n)
	}
	// cloudroot's update-initramfs and the dpkg trigger rebuilt both.
	compat := d.read("/var/lib/cloudroot-test/compat.txt")
	t.Logf("guest update-initramfs -u -k all (cloudroot's):\n%s", compat)
	trigger := d.read("/var/lib/cloudroot-test/trigger.txt")
	t.Logf("guest update-initramfs trigger:\n%s", trigger)
	for _, k := range []string{oldKernel, upgradeKernel} {
		if !strings.Contains(compat, "update-initramfs: Generating /boot/initrd.img-"+k) {
			t.Errorf("cloudroot's update-initramfs -u -k all did not rebuild %s", k)
		}
		if !strings.Contains(trigger, "cloudroot: building /boot/initrd.img-"+k) {
			t.Errorf("the update-initramfs trigger did not rebuild %s", k)
		}
		b, err := d.im.ReadFile("/var/lib/cloudroot-test/initrds/initrd.img-" + k)
		if err != nil {
			t.Errorf("kernel %s had no initrd: %v", k, err)
			continue
		}
		if ok, err := cloudrootInitrd(b); err != nil || !ok {
			t.Errorf("/boot/initrd.img-%s was not cloudroot's (%v)", k, err)
		}
	}
	for _, want := range []string{"update-initramfs rc=0", "cloudroot: update-initramfs triggered", "trigger rc=0", "ii  cloudroot"} {
		if !strings.Contains(compat+trigger, want) {
			t.Errorf("update-initramfs/trigger output lacks %q", want)
		}
	}
	// cloudroot removed, initramfs-tools back: every kernel has its initrd.
	removal := d.read("/var/lib/cloudroot-test/removal.txt")
	t.Logf("guest removal:\n%s", removal)
	for _, want := range []string{"Purging configuration files for cloudroot", "Generating grub configuration file", "apt rc=0", "update-initramfs rc=0"} {
		if !strings.Contains(removal, want) {
			t.Errorf("removing cloudroot: the output lacks %q", want)
		}
	}
	after := d.read("/var/lib/cloudroot-test/initrds-after.txt")
	t.Logf("initrds after the removal:\n%s", after)
	for _, k := range []string{oldKernel, upgradeKernel} {
		if !strings.Contains(after, k+" initramfs-tools\n") {
			t.Errorf("after removing cloudroot, kernel %s has no initramfs-tools initrd", k)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	r = v.boot(o)
	wantPoweredOff(t, r)
	if strings.Contains(r.Console, "running 'init-local'") {
		t.Errorf("boot 3 ran cloudroot's initramfs after its removal")
	}
	d = v.image()
	boot3 := d.read("/var/lib/cloudroot-test/boot-3.txt")
	t.Logf("boot 3:\n%s", boot3)
	for _, want := range []string{upgradeKernel + "\n", "BOOT_IMAGE=/boot/vmlinuz-" + upgradeKernel, "no cloud-init", "cloudroot did not run", "ii  initramfs-tools"} {
		if !strings.Contains(boot3, want) {
			t.Errorf("boot 3 (after the removal) lacks %q", want)
		}
	}
}
