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
//     record the new kernel, status is done; both kernels' initrds on the
//     disk are cloudroot's (its /init), none is initramfs-tools'.
//
// TestDebian covers the SeaBIOS first boot with the full user-data.

import (
	"bytes"
	"compress/gzip"
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
	return `#cloud-config
hostname: upgrade-test
` + aptLocalRepoConfig(repo, "bookworm") + `bootcmd:
  - mkdir -p /var/lib/cloudroot-test
  - uname -r >> /var/lib/cloudroot-test/bootcmd-kernels.txt
write_files:
  - path: /etc/default/grub.d/90-cloudroot-test.cfg
    content: |
      GRUB_DISABLE_SUBMENU=y
      GRUB_DEFAULT="Debian GNU/Linux, with Linux ` + upgradeKernel + `"
  - path: /var/lib/cloud/scripts/per-boot/cloudroot-test
    permissions: "0755"
    content: |
      #!/bin/sh
      out=/var/lib/cloudroot-test
      mkdir -p $out
      n=$(ls $out/boot-*.txt 2>/dev/null | wc -l)
      n=$((n + 1))
      { uname -r; cat /proc/cmdline; if [ -d /sys/firmware/efi ]; then echo uefi; else echo bios; fi; } >$out/boot-$n.txt
      systemd-run --no-block --unit=cloudroot-test-poweroff sh -c "cloud-init status --long >$out/status-$n.txt 2>&1; cloud-init status --wait >>$out/status-$n.txt 2>&1; ls -l /boot >$out/ls-boot-$n.txt; sync; systemctl poweroff"
runcmd:
  - [sh, -c, "apt-get update >/var/lib/cloudroot-test/apt.txt 2>&1 && apt-get install -y --no-install-recommends linux-image-` + upgradeKernel + ` >>/var/lib/cloudroot-test/apt.txt 2>&1; echo rc=$? >>/var/lib/cloudroot-test/apt.txt"]
`
}

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
	repo, srv := serveAptRepo(t, 10*time.Minute, harness.AptRepoOptions{
		Packages: []string{"linux-image-" + upgradeKernel}, Image: v.a.Debian, Dir: filepath.Join(v.dir, "repo"),
		EmptySuites: []string{"bookworm-updates", "bookworm-security", "bookworm-backports"},
	})
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: iid-debian-kernel-upgrade\n"),
		"user-data":      []byte(kernelUpgradeUserData(repo)),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	o := harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: 2 * debianTimeout,
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
	for _, k := range []string{oldKernel, upgradeKernel} {
		b, err := d.im.ReadFile("/boot/initrd.img-" + k)
		if err != nil {
			t.Errorf("kernel %s has no initrd: %v", k, err)
			continue
		}
		if ok, err := cloudrootInitrd(b); err != nil || !ok {
			t.Errorf("/boot/initrd.img-%s is not cloudroot's (%v)", k, err)
		}
	}
}
