package integration

// TestDebianArm64 boots build/arm64/debian-12.img (`just debian-image
// arch=arm64`: Debian 12 arm64, cloudroot installed through its arm64
// package) by itself under qemu-system-aarch64 -machine virt with AAVMF, as
// an arm64 cloud boots it: the firmware finds GRUB at the ESP's removable
// path \EFI\BOOT\BOOTAA64.EFI (no NVRAM entry), GRUB the kernel and the
// cloudroot initrd the package built. The seed and the checks are
// TestDebian's (debianUserData): hostname, users and keys, host keys served
// by sshd, runcmd, status done, power_state.
//
// Under TCG a Debian boot takes minutes, so the test runs only when
// CLOUDROOT_ARM64_DEBIAN=1 (`just debian-arm64`), not in `just test`. (The
// file is not named *_arm64_test.go: Go would build that on arm64 hosts only.)

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// EnvArm64Debian turns TestDebianArm64 on ("1").
const EnvArm64Debian = "CLOUDROOT_ARM64_DEBIAN"

// debianArm64Timeout bounds the arm64 Debian boot to power-off: firmware,
// GRUB, kernel and systemd all emulated (TCG).
const debianArm64Timeout = 30 * time.Minute

// debianArm64Facts are runcmd lines recorded beside debianFacts': the
// machine, the firmware, and systemd's view of the boot (systemd-analyze
// fails while the final stage still holds the boot open: that is no error).
const debianArm64Facts = `  - [sh, -c, "uname -m > /var/lib/cloudroot-test/uname-m.txt; if [ -d /sys/firmware/efi ]; then echo uefi; else echo no-uefi; fi > /var/lib/cloudroot-test/firmware.txt; systemd-analyze > /var/lib/cloudroot-test/systemd-analyze.txt 2>&1; true"]
`

func TestDebianArm64(t *testing.T) {
	if os.Getenv(EnvArm64Debian) != "1" {
		t.Skip("set " + EnvArm64Debian + "=1 to boot the arm64 Debian image under TCG (minutes; `just debian-arm64`)")
	}
	a := arm64Artifacts(t)
	if fi, err := os.Stat(a.Debian); err != nil || !fi.Mode().IsRegular() {
		t.Fatal("no " + a.Debian + " (build it with `just debian-image arch=arm64`)")
	}
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(a.Debian, v.disk); err != nil {
		t.Fatal(err)
	}
	userData := debianUserData()
	const runcmd = "runcmd:\n  - [/usr/local/sbin/cloudroot-facts]\n"
	if !strings.Contains(userData, runcmd) {
		t.Fatalf("debianUserData has no %q to add the arm64 facts to", runcmd)
	}
	userData = strings.Replace(userData, runcmd, runcmd+debianArm64Facts, 1)
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: iid-debian-arm64\nlocal-hostname: debian-meta\n"),
		"user-data":      []byte(userData),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	r := v.boot(harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: debianArm64Timeout})
	wantPoweredOff(t, r)
	wantConsole(t, r, "running 'init-local'", "cloudroot TestDebian powering off")
	d := v.image()

	facts := func(name string) string { t.Helper(); return d.fact(t, name) }

	// The figures docs/distributions.md quotes: the initramfs's stages
	// (the state file), the booted root's units, QEMU start to power-off.
	if st, err := d.im.State(); err != nil {
		t.Errorf("state file: %v", err)
	} else {
		for _, tm := range st.Timings {
			t.Logf("TIMING %-22s at %8.3f s took %7.3f s", tm.Stage, tm.Start, tm.Duration)
		}
	}
	facts("systemd-analyze.txt")
	facts("units.txt")
	t.Logf("ARM64 DEBIAN BOOT: QEMU start to power-off %.1f s (TCG)", r.Elapsed.Seconds())

	t.Run("arm64_uefi", func(t *testing.T) {
		if got := facts("uname-m.txt"); got != "aarch64" {
			t.Errorf("uname -m = %q, want aarch64", got)
		}
		if got := facts("firmware.txt"); got != "uefi" {
			t.Errorf("the guest booted without UEFI (%q)", got)
		}
		kver := facts("uname-r.txt")
		if !strings.HasSuffix(kver, "-arm64") {
			t.Errorf("the guest runs kernel %q, want Debian's arm64 flavour", kver)
		}
		cmdline := facts("cmdline.txt")
		if !strings.Contains(cmdline, "BOOT_IMAGE=/boot/vmlinuz-"+kver) || !strings.Contains(cmdline, "console=ttyAMA0") ||
			!strings.Contains(cmdline, "root=LABEL=cloudimg-rootfs") {
			t.Errorf("/proc/cmdline = %q, want GRUB's (BOOT_IMAGE=/boot/vmlinuz-%s, console=ttyAMA0, root by label)", cmdline, kver)
		}
		if b, err := d.im.ReadFile("/boot/initrd.img-" + kver); err != nil {
			t.Errorf("kernel %s has no initrd: %v", kver, err)
		} else if ok, err := cloudrootInitrd(b); err != nil || !ok {
			t.Errorf("/boot/initrd.img-%s is not cloudroot's (%v)", kver, err)
		}
		d.wantAbsent("/etc/kernel/postinst.d/initramfs-tools")
	})

	t.Run("hostname", func(t *testing.T) {
		d.wantContent("/etc/hostname", "debtest\n")
		if got := facts("hostname.txt"); got != "debtest" {
			t.Errorf("hostname in the guest = %q, want debtest", got)
		}
	})

	t.Run("users_ssh", func(t *testing.T) {
		pw := harness.ParsePasswd([]byte(d.read("/etc/passwd")))
		for _, u := range []string{"debian", "alice", "bob"} {
			if _, ok := pw[u]; !ok {
				t.Errorf("no user %s in /etc/passwd", u)
			}
		}
		d.wantContains("/home/alice/.ssh/authorized_keys", debianUserKey)
		d.wantMode("/home/alice/.ssh/authorized_keys", 0o600, pw["alice"].UID, pw["alice"].GID)
		d.wantContains("/etc/sudoers.d/90-cloud-init-users", "alice ALL=(ALL) NOPASSWD:ALL")
		wantHostKeysServed(t, d, facts)
	})

	t.Run("network", func(t *testing.T) {
		d.wantContains("/etc/network/interfaces.d/50-cloud-init", "iface lan0 inet dhcp")
		if got := facts("ip-addr.txt"); !strings.Contains(got, "lan0") || !strings.Contains(got, "inet 10.0.2.15/") {
			t.Errorf("ip -4 addr in the guest:\n%s\nwant lan0 with 10.0.2.15 (DHCP from QEMU)", got)
		}
	})

	t.Run("bootcmd_runcmd_status", func(t *testing.T) {
		if got := facts("bootcmd.txt"); got != "bootcmd ran" {
			t.Errorf("bootcmd output = %q", got)
		}
		if got := facts("runcmd.txt"); got != "runcmd done" {
			t.Errorf("runcmd output = %q", got)
		}
		d.wantContent("/etc/cloudroot-test/early.txt", "written before the users exist\n")
		if got := facts("failed.txt"); got != "" {
			t.Errorf("failed units in the guest:\n%s", got)
		}
		got := facts("status-long.txt")
		for _, want := range []string{"status: done", "rc=0"} {
			if !strings.Contains(got, want) {
				t.Errorf("cloud-init status --long after the final stage lacks %q:\n%s", want, got)
			}
		}
	})
}
