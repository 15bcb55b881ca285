package integration

// TestDebianUEFI boots build/debian-12.img by itself under UEFI (OVMF, no
// NVRAM: the firmware finds GRUB at the removable path
// \EFI\BOOT\BOOTX64.EFI of the ESP) with a NoCloud seed, and checks the
// instance was provisioned through cloudroot's initramfs: TestDebian does
// the same under SeaBIOS with the full user-data.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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

const selfBootUserData = `#cloud-config
hostname: uefi-test
runcmd:
  - mkdir -p /var/lib/cloudroot-test
  - cat /proc/cmdline > /var/lib/cloudroot-test/cmdline.txt
  - uname -r > /var/lib/cloudroot-test/uname-r.txt
  - if [ -d /sys/firmware/efi ]; then echo uefi; else echo bios; fi > /var/lib/cloudroot-test/firmware.txt
power_state:
  mode: poweroff
  delay: now
  message: cloudroot TestDebianUEFI powering off
  timeout: 120
  condition: "cloud-init status --wait >/var/lib/cloudroot-test/status.txt 2>&1; true"
`

func TestDebianUEFI(t *testing.T) {
	if _, err := os.Stat(harness.OVMFPath); err != nil {
		msg := "no UEFI firmware at " + harness.OVMFPath + " (Debian package ovmf; just deps)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	v := newDebianVM(t)
	seed := v.seed(map[string][]byte{
		"meta-data": []byte("instance-id: iid-debian-uefi\n"),
		"user-data": []byte(selfBootUserData),
	}, harness.SeedISO)
	r := v.boot(harness.BootOptions{DiskBoot: true, Firmware: harness.OVMFPath, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: debianTimeout})
	wantPoweredOff(t, r)
	wantConsole(t, r, "running 'init-local'", "cloudroot TestDebianUEFI powering off")
	d := v.image()
	d.wantContent("/etc/hostname", "uefi-test\n")
	d.wantContent("/var/lib/cloudroot-test/firmware.txt", "uefi\n")
	kver := strings.TrimSpace(d.read("/var/lib/cloudroot-test/uname-r.txt"))
	if cmdline := d.read("/var/lib/cloudroot-test/cmdline.txt"); !strings.Contains(cmdline, "BOOT_IMAGE=/boot/vmlinuz-"+kver) {
		t.Errorf("/proc/cmdline = %q, want GRUB's for kernel %s", cmdline, kver)
	}
	d.wantContains("/var/lib/cloudroot-test/status.txt", "status: done")
}
