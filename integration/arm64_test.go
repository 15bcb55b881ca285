package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// arm64BootTimeout bounds one arm64 boot: qemu-system-aarch64 under TCG on
// an amd64 host runs the UEFI firmware and the kernel several times slower
// than an amd64 guest (the demo: about 55 s to power-off on a quiet host).
const arm64BootTimeout = 360 * time.Second

// arm64Artifacts returns the arm64 build (build/arm64, `just arm64`), or
// skips (fails under CLOUDROOT_INTEGRATION=1) when it is missing.
func arm64Artifacts(t *testing.T) harness.Artifacts {
	t.Helper()
	dir, err := harness.BuildDir()
	if err != nil {
		t.Fatal(err)
	}
	a := harness.ArtifactsIn(filepath.Join(dir, "arm64"))
	miss := a.Missing()
	if a.Arch != harness.ArchARM64 {
		miss = append(miss, filepath.Join(a.Dir, "kernel", "version")+" (an arm64 kernel)")
	}
	miss = append(miss, harness.HaveTools(harness.QEMUArm64, "debugfs")...)
	if _, err := os.Stat(filepath.Join(harness.AAVMFDir, "AAVMF_CODE.fd")); err != nil {
		miss = append(miss, "AAVMF firmware (qemu-efi-aarch64)")
	}
	if len(miss) > 0 {
		msg := "arm64 artifacts or tools missing: " + strings.Join(miss, ", ") + " (build with `just arm64`; tools: `just deps`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set " + EnvIntegration + "=1 to make this a failure")
	}
	return a
}

// arm64UserData records what the guest saw: its machine, whether DMI
// (SMBIOS) and a device tree exist, and the DMI vendor when there is one.
const arm64UserData = `#cloud-config
users:
  - default
  - name: armuser
    groups: [adm]
    shell: /bin/sh
    ssh_authorized_keys: [ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJhcm02NCB0ZXN0IGtleSBmb3IgY2xvdWRyb290IGl0 arm@test]
write_files:
  - path: /etc/t-arm64.txt
    content: written on arm64
runcmd:
  - [sh, -c, "uname -m > /var/log/t-uname.log"]
  - [sh, -c, "if [ -r /sys/class/dmi/id/sys_vendor ]; then cat /sys/class/dmi/id/sys_vendor; else echo no-dmi; fi > /var/log/t-dmi.log"]
  - [sh, -c, "if [ -e /proc/device-tree/compatible ]; then echo device-tree; else echo no-device-tree; fi > /var/log/t-dt.log"]
`

// TestArm64 boots the arm64 build (Debian's linux-image-arm64, its modules
// in cloudroot's initramfs, the arm64 agent in a busybox root) under
// qemu-system-aarch64 -machine virt, TCG, in two ways at once:
//   - uefi: AAVMF firmware, as arm64 clouds boot. The seed comes from the
//     SMBIOS system serial (ds=nocloud;s=file:///srv/smbios/;i=;h=), which
//     reaches an arm64 guest only through UEFI's SMBIOS tables: DMI-driven
//     detection on arm64.
//   - devicetree: no firmware, QEMU hands the kernel a device tree; no
//     SMBIOS, so DMI reads empty (as cloud-init reads it), and NoCloud is
//     found by its cidata label.
//
// Both must provision (user, key, file, runcmd, hostname), reach status
// done and power off.
func TestArm64(t *testing.T) {
	t.Parallel()
	a := arm64Artifacts(t)
	t.Run("uefi", func(t *testing.T) {
		t.Parallel()
		v := newVMFrom(t, a)
		im, err := harness.OpenImage(v.disk)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.MkdirAll("/srv/smbios"); err != nil {
			t.Fatal(err)
		}
		for p, b := range map[string][]byte{
			"/srv/smbios/meta-data": meta("iid-from-meta", "meta-name"),
			"/srv/smbios/user-data": []byte(arm64UserData),
		} {
			if err := im.WriteFile(p, b); err != nil {
				t.Fatal(err)
			}
		}
		r := v.boot(harness.BootOptions{
			SMBIOSSerial: "ds=nocloud;s=file:///srv/smbios/;i=iid-arm64-uefi;h=arm64-uefi",
			Append:       []string{"cloudroot.test.poweroff"},
			Timeout:      arm64BootTimeout,
		})
		wantPoweredOff(t, r)
		wantConsole(t, r, "EFI stub: Booting Linux Kernel", "cloudroot-rootfs| status: done")
		d := v.image()
		if h := d.hostname(); h != "arm64-uefi" {
			t.Errorf("/etc/hostname = %q, want arm64-uefi (h= in the SMBIOS serial)", h)
		}
		d.wantContent(harness.InstanceIDPath, "iid-arm64-uefi\n")
		d.wantContent("/var/log/t-dmi.log", "QEMU\n")
		wantArm64Provisioned(d)
	})
	t.Run("devicetree", func(t *testing.T) {
		t.Parallel()
		v := newVMFrom(t, a)
		seed := v.seed(map[string][]byte{
			"meta-data": meta("iid-arm64-dt", "arm64-dt"),
			"user-data": []byte(arm64UserData),
		}, harness.SeedISO)
		r := v.boot(harness.BootOptions{
			Seed: seed, SeedKind: harness.SeedCDROMSCSI,
			NoFirmware: true,
			Append:     []string{"cloudroot.test.poweroff"},
			Timeout:    arm64BootTimeout,
		})
		wantPoweredOff(t, r)
		wantConsole(t, r, "cloudroot-rootfs| status: done")
		if strings.Contains(r.Console, "EFI stub") {
			t.Errorf("the device-tree boot went through UEFI")
		}
		d := v.image()
		if h := d.hostname(); h != "arm64-dt" {
			t.Errorf("/etc/hostname = %q, want arm64-dt (meta-data local-hostname)", h)
		}
		d.wantContent(harness.InstanceIDPath, "iid-arm64-dt\n")
		d.wantContent("/var/log/t-dmi.log", "no-dmi\n")
		d.wantContent("/var/log/t-dt.log", "device-tree\n")
		wantArm64Provisioned(d)
	})
}

// wantArm64Provisioned checks what arm64UserData asks for.
func wantArm64Provisioned(d *disk) {
	d.t.Helper()
	d.wantContent("/var/log/t-uname.log", "aarch64\n")
	d.wantContent("/etc/t-arm64.txt", "written on arm64")
	if !strings.Contains(d.read("/etc/passwd"), "\narmuser:") {
		d.t.Errorf("/etc/passwd has no armuser")
	}
	if k := d.read("/home/armuser/.ssh/authorized_keys"); !strings.Contains(k, "arm@test") {
		d.t.Errorf("armuser's authorized_keys = %q, want the arm@test key", k)
	}
	if st := d.status(); st != nil && len(st.AllErrors()) > 0 {
		d.t.Errorf("status.json errors: %v", st.AllErrors())
	}
}
