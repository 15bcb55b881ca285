package integration

// TestDebianLifecycle: the Debian image's life after the kernel upgrade
// that TestDebianKernelUpgrade proves — rebuilding initrds, GRUB's boot
// code following a GRUB upgrade, and cloudroot's removal — on one disk
// with one kernel, three boots, a NoCloud seed and a signed apt repository
// on 127.0.0.1 (initramfs-tools and its dependencies, and the image's own
// grub-pc-bin and grub-efi-amd64-bin to reinstall). Each guest step runs
// with a time limit (timeout(1)) and says its start and exit status on the
// console ("cloudroot-test: STEP: ..."), its output kept in
// /var/lib/cloudroot-test/STEP.txt, so a slow or stuck run shows where.
//
//  1. SeaBIOS, the boot code the image was built with: cloudroot's
//     update-initramfs -u -k all, then the update-initramfs dpkg trigger,
//     each rebuild the kernel's initrd (a new mtime, still cloudroot's: its
//     /init, no initramfs-tools scripts); then apt-get install --reinstall
//     grub-pc-bin grub-efi-amd64-bin — dpkg unpacks /usr/lib/grub/i386-pc
//     and x86_64-efi again, as an upgrade does, and grub-cloud-amd64's file
//     triggers run grub-install for i386-pc (the BIOS boot partition's
//     core.img changes) and x86_64-efi (shim and Debian's signed GRUB on
//     the ESP at /boot/efi, \EFI\BOOT\BOOTX64.EFI now shim).
//  2. OVMF, no NVRAM: the firmware runs the shim grub-install put at the
//     removable path, GRUB boots the kernel with cloudroot's initrd
//     (init-local on the console, status done). Then cloudroot goes as
//     docs/distributions.md says: apt-get install --purge initramfs-tools
//     cloudroot- from the local repository (MODULES=dep in
//     /etc/initramfs-tools/conf.d, written by the seed: the initrd holds
//     what this machine needs, not every driver), update-initramfs -u -k
//     all; the kernel's initrd is initramfs-tools'; a plain unit is left
//     to record boot 3 and power off.
//  3. SeaBIOS, the boot code grub-install wrote: GRUB boots the kernel with
//     initramfs-tools' initrd to the root; neither cloudroot nor cloud-init
//     is installed or ran.
//
// Three Debian boots under TCG take many minutes, so the test runs only
// with CLOUDROOT_DEBIAN_LIFECYCLE=1 (`just debian-lifecycle`), not in
// `just test`.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// EnvDebianLifecycle turns TestDebianLifecycle on ("1").
const EnvDebianLifecycle = "CLOUDROOT_DEBIAN_LIFECYCLE"

// lifecycleStep runs one guest step: NAME SECONDS CMD...
const lifecycleStep = `#!/bin/sh
out=/var/lib/cloudroot-test
name=$1 limit=$2
shift 2
echo "cloudroot-test: $name: start $(date +%T)" >/dev/console
timeout -k 10 "$limit" "$@" >$out/$name.txt 2>&1
rc=$?
echo "rc=$rc" >>$out/$name.txt
echo "cloudroot-test: $name: rc=$rc $(date +%T)" >/dev/console
sync
exit $rc
`

// lifecycleInitrds prints "VERSION MTIME KIND" for every installed kernel:
// KIND is cloudroot (a gzip'ed cpio holding cloudroot's /init and this
// kernel's module directory, no initramfs-tools scripts), initramfs-tools
// (lsinitramfs lists scripts/init-top), none or other.
const lifecycleInitrds = `#!/bin/sh
for m in /lib/modules/*; do
	v=${m##*/}
	f=/boot/initrd.img-$v
	if [ ! -e $f ]; then echo "$v - none"; continue; fi
	kind=other
	if zcat $f 2>/dev/null | grep -aq github.com/cloudroot/cloudroot &&
		zcat $f | grep -aq "lib/modules/$v/modules.dep" &&
		! zcat $f | grep -aq scripts/init-top; then
		kind=cloudroot
	elif command -v lsinitramfs >/dev/null && lsinitramfs $f | grep -q scripts/init-top; then
		kind=initramfs-tools
	fi
	echo "$v $(stat -c %Y $f) $kind"
done
`

// lifecycleBootCode prints the disk's boot code: the MBR's code, the BIOS
// boot partition (14: sectors 2048-8191), and the files on the ESP beside
// the shim and signed GRUB that grub-install copies there.
const lifecycleBootCode = `#!/bin/sh
echo "mbr $(dd if=/dev/vda bs=440 count=1 2>/dev/null | sha256sum | cut -c1-16)"
echo "bios-boot $(dd if=/dev/vda bs=512 skip=2048 count=6144 2>/dev/null | sha256sum | cut -c1-16)"
echo "esp-mount $(findmnt -n -o SOURCE,FSTYPE /boot/efi)"
cd /boot/efi && find . -type f | sort | while read -r f; do echo "esp $f $(sha256sum <"$f" | cut -c1-16)"; done
echo "shim $(sha256sum </usr/lib/shim/shimx64.efi.signed | cut -c1-16)"
`

// lifecycleBoot1 and lifecycleBoot2 run once status is done.
const lifecycleBoot1 = `#!/bin/sh
step=/usr/local/sbin/cloudroot-test-step
export DEBIAN_FRONTEND=noninteractive
$step initrds-0 120 /usr/local/sbin/cloudroot-test-initrds
sleep 1
$step update-initramfs 900 update-initramfs -u -k all
$step initrds-1 120 /usr/local/sbin/cloudroot-test-initrds
sleep 1
$step trigger 900 sh -c 'dpkg-trigger --no-await update-initramfs && dpkg --triggers-only --pending; rc=$?; dpkg-query -W -f="\${db:Status-Abbrev} \${Package}\n" cloudroot; exit $rc'
$step initrds-2 120 /usr/local/sbin/cloudroot-test-initrds
$step bootcode-0 120 /usr/local/sbin/cloudroot-test-bootcode
$step grub 1200 sh -c 'apt-get update && apt-get install -y --reinstall --no-install-recommends grub-pc-bin grub-efi-amd64-bin'
$step bootcode-1 120 /usr/local/sbin/cloudroot-test-bootcode
`

const lifecycleBoot2 = `#!/bin/sh
step=/usr/local/sbin/cloudroot-test-step
export DEBIAN_FRONTEND=noninteractive
$step remove 1500 apt-get install -y --purge --no-install-recommends initramfs-tools cloudroot-
$step update-initramfs-tools 900 update-initramfs -u -k all
$step initrds-3 120 /usr/local/sbin/cloudroot-test-initrds
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
$step enable-boot3 60 systemctl enable cloudroot-test-boot3.service
`

// lifecycleBoot3 is what the unit runs in boot 3 (no cloudroot, no cloud-init).
const lifecycleBoot3 = `#!/bin/sh
out=/var/lib/cloudroot-test
echo "cloudroot-test: boot 3" >/dev/console
{
	uname -r
	cat /proc/cmdline
	if [ -d /sys/firmware/efi ]; then echo uefi; else echo bios; fi
	command -v cloud-init || echo "no cloud-init"
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' cloudroot initramfs-tools 2>&1
	test -e /run/cloud-init/cloudroot && echo "cloudroot ran" || echo "cloudroot did not run"
	findmnt -n -o TARGET,FSTYPE /boot/efi
} >$out/boot-3.txt 2>&1
sync
systemctl --no-block poweroff
`

func lifecycleUserData(repo *harness.AptRepo) string {
	file := func(path, mode, content string) string {
		return "  - path: " + path + "\n    permissions: \"" + mode + "\"\n    content: |\n" + indent(content, "      ") + "\n"
	}
	return `#cloud-config
hostname: lifecycle-test
` + aptLocalRepoConfig(repo, "bookworm") + `write_files:
` + file("/etc/initramfs-tools/conf.d/cloudroot-test.conf", "0644", "MODULES=dep\n") +
		file("/usr/local/sbin/cloudroot-test-step", "0755", lifecycleStep) +
		file("/usr/local/sbin/cloudroot-test-initrds", "0755", lifecycleInitrds) +
		file("/usr/local/sbin/cloudroot-test-bootcode", "0755", lifecycleBootCode) +
		file("/usr/local/sbin/cloudroot-test-boot1", "0755", lifecycleBoot1) +
		file("/usr/local/sbin/cloudroot-test-boot2", "0755", lifecycleBoot2) +
		file("/usr/local/sbin/cloudroot-test-boot3", "0755", lifecycleBoot3) +
		file("/var/lib/cloud/scripts/per-boot/cloudroot-test", "0755", `#!/bin/sh
out=/var/lib/cloudroot-test
mkdir -p $out
n=$(ls $out/boot-*.txt 2>/dev/null | wc -l)
n=$((n + 1))
{ uname -r; cat /proc/cmdline; if [ -d /sys/firmware/efi ]; then echo uefi; else echo bios; fi; } >$out/boot-$n.txt
echo "cloudroot-test: boot $n" >/dev/console
systemd-run --no-block --unit=cloudroot-test-steps sh -c "cloud-init status --wait >$out/status-$n.txt 2>&1; cloud-init status --long >>$out/status-$n.txt 2>&1; /usr/local/sbin/cloudroot-test-boot$n; ls -l /boot >$out/ls-boot-$n.txt; sync; systemctl poweroff"
`)
}

// lifecycleInitrd is one line of cloudroot-test-initrds.
type lifecycleInitrd struct{ mtime, kind string }

func parseLifecycleInitrds(s string) map[string]lifecycleInitrd {
	m := map[string]lifecycleInitrd{}
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			m[f[0]] = lifecycleInitrd{f[1], f[2]}
		}
	}
	return m
}

// parseBootCode maps cloudroot-test-bootcode's names (mbr, bios-boot,
// esp ./EFI/BOOT/BOOTX64.EFI, shim, esp-mount) to their values.
func parseBootCode(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 3 && f[0] == "esp":
			m["esp "+f[1]] = f[2]
		case len(f) >= 2:
			m[f[0]] = strings.Join(f[1:], " ")
		}
	}
	return m
}

func TestDebianLifecycle(t *testing.T) {
	if os.Getenv(EnvDebianLifecycle) != "1" {
		t.Skip("three Debian boots under TCG: set " + EnvDebianLifecycle + "=1 (`just debian-lifecycle`)")
	}
	if _, err := os.Stat(harness.OVMFPath); err != nil {
		t.Fatal("no UEFI firmware at " + harness.OVMFPath + " (Debian package ovmf; just deps)")
	}
	v := newDebianVM(t)
	needTools(t, "nc", "apt-get", "dpkg-scanpackages", "gpg")
	repo, srv := serveAptRepo(t, 10*time.Minute, harness.AptRepoOptions{
		Packages: []string{"initramfs-tools", "grub-pc-bin", "grub-efi-amd64-bin"}, Reinstall: true,
		Image: v.a.Debian, Dir: filepath.Join(v.dir, "repo"),
		EmptySuites: []string{"bookworm-updates", "bookworm-security", "bookworm-backports"},
	})
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: iid-debian-lifecycle\n"),
		"user-data":      []byte(lifecycleUserData(repo)),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	o := harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: 3 * debianTimeout,
		GuestFwd: []harness.GuestFwd{srv.GuestFwd()}}
	stepsOK := func(d *disk, steps ...string) {
		t.Helper()
		for _, s := range steps {
			out := d.read("/var/lib/cloudroot-test/" + s + ".txt")
			t.Logf("guest step %s:\n%s", s, out)
			if !strings.HasSuffix(out, "rc=0\n") {
				t.Errorf("guest step %s failed", s)
			}
		}
	}

	// Boot 1: SeaBIOS, the build's boot code.
	r := v.boot(o)
	wantPoweredOff(t, r)
	wantConsole(t, r, "running 'init-local'", "cloudroot-test: grub: rc=0")
	d := v.image()
	boot1 := d.read("/var/lib/cloudroot-test/boot-1.txt")
	kernel, _, _ := strings.Cut(boot1, "\n")
	t.Logf("boot 1:\n%s", boot1)
	if !strings.HasSuffix(boot1, "bios\n") || !strings.Contains(boot1, "BOOT_IMAGE=/boot/vmlinuz-"+kernel) {
		t.Errorf("boot 1 was not GRUB under SeaBIOS:\n%s", boot1)
	}
	d.wantContains("/var/lib/cloudroot-test/status-1.txt", "status: done")
	stepsOK(d, "initrds-0", "update-initramfs", "initrds-1", "trigger", "initrds-2", "bootcode-0", "grub", "bootcode-1")
	var rounds []lifecycleInitrd
	for _, f := range []string{"initrds-0", "initrds-1", "initrds-2"} {
		in := parseLifecycleInitrds(d.read("/var/lib/cloudroot-test/" + f + ".txt"))
		if len(in) != 1 || in[kernel].kind != "cloudroot" {
			t.Errorf("%s: want one kernel, %s, with a cloudroot initrd: %v", f, kernel, in)
		}
		rounds = append(rounds, in[kernel])
	}
	if rounds[1].mtime == rounds[0].mtime {
		t.Errorf("cloudroot's update-initramfs -u -k all did not rewrite /boot/initrd.img-%s", kernel)
	}
	if rounds[2].mtime == rounds[1].mtime {
		t.Errorf("the update-initramfs trigger did not rewrite /boot/initrd.img-%s", kernel)
	}
	upd, trig := d.read("/var/lib/cloudroot-test/update-initramfs.txt"), d.read("/var/lib/cloudroot-test/trigger.txt")
	if !strings.Contains(upd, "update-initramfs: Generating /boot/initrd.img-"+kernel) {
		t.Errorf("cloudroot's update-initramfs -u -k all did not say it rebuilt %s", kernel)
	}
	for _, want := range []string{"cloudroot: update-initramfs triggered", "cloudroot: building /boot/initrd.img-" + kernel, "ii  cloudroot"} {
		if !strings.Contains(trig, want) {
			t.Errorf("the update-initramfs trigger's output lacks %q", want)
		}
	}
	grub := d.read("/var/lib/cloudroot-test/grub.txt")
	if n := strings.Count(grub, "Installation finished. No error reported."); n != 2 ||
		!strings.Contains(grub, "Installing for i386-pc platform.") || !strings.Contains(grub, "Installing for x86_64-efi platform.") {
		t.Errorf("reinstalling GRUB's packages did not run grub-install for i386-pc and x86_64-efi (%d finished)", n)
	}
	before, after := parseBootCode(d.read("/var/lib/cloudroot-test/bootcode-0.txt")), parseBootCode(d.read("/var/lib/cloudroot-test/bootcode-1.txt"))
	if before["esp-mount"] != "/dev/vda15 vfat" {
		t.Errorf("the ESP is not mounted at /boot/efi: %q", before["esp-mount"])
	}
	// The MBR's code may come out the same: the build patches boot.img as
	// grub-bios-setup does. core.img differs (grub-install's finds the root
	// by UUID, the build's by label).
	for _, k := range []string{"bios-boot", "esp ./EFI/BOOT/BOOTX64.EFI"} {
		if before[k] == "" || after[k] == "" || before[k] == after[k] {
			t.Errorf("grub-install did not rewrite %s (%q, then %q)", k, before[k], after[k])
		}
	}
	if after["esp ./EFI/BOOT/BOOTX64.EFI"] != after["shim"] || after["esp ./EFI/debian/shimx64.efi"] != after["shim"] {
		t.Errorf("\\EFI\\BOOT\\BOOTX64.EFI and \\EFI\\debian\\shimx64.efi are not Debian's shim after grub-install")
	}
	for _, k := range []string{"esp ./EFI/BOOT/grubx64.efi", "esp ./EFI/debian/grubx64.efi", "esp ./EFI/debian/grub.cfg"} {
		if after[k] == "" {
			t.Errorf("no %s on the ESP after grub-install", strings.TrimPrefix(k, "esp "))
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Boot 2: OVMF, grub-install's shim and GRUB; then cloudroot's removal.
	uefi := o
	uefi.Firmware = harness.OVMFPath
	r = v.boot(uefi)
	wantPoweredOff(t, r)
	wantConsole(t, r, "running 'init-local'", "cloudroot-test: enable-boot3: rc=0")
	d = v.image()
	boot2 := d.read("/var/lib/cloudroot-test/boot-2.txt")
	t.Logf("boot 2:\n%s", boot2)
	if !strings.HasPrefix(boot2, kernel+"\n") || !strings.HasSuffix(boot2, "uefi\n") || !strings.Contains(boot2, "BOOT_IMAGE=/boot/vmlinuz-"+kernel) {
		t.Errorf("boot 2 was not GRUB under UEFI:\n%s", boot2)
	}
	d.wantContains("/var/lib/cloudroot-test/status-2.txt", "status: done")
	stepsOK(d, "remove", "update-initramfs-tools", "initrds-3", "enable-boot3")
	remove := d.read("/var/lib/cloudroot-test/remove.txt")
	for _, want := range []string{"Purging configuration files for cloudroot", "Generating grub configuration file"} {
		if !strings.Contains(remove, want) {
			t.Errorf("removing cloudroot: the output lacks %q", want)
		}
	}
	if in := parseLifecycleInitrds(d.read("/var/lib/cloudroot-test/initrds-3.txt")); len(in) != 1 || in[kernel].kind != "initramfs-tools" {
		t.Errorf("after removing cloudroot: want %s with an initramfs-tools initrd: %v", kernel, in)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Boot 3: SeaBIOS, grub-install's boot code, no cloudroot.
	r = v.boot(o)
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-test: boot 3")
	if strings.Contains(r.Console, "running 'init-local'") {
		t.Errorf("boot 3 ran cloudroot's initramfs after its removal")
	}
	d = v.image()
	boot3 := d.read("/var/lib/cloudroot-test/boot-3.txt")
	t.Logf("boot 3:\n%s", boot3)
	for _, want := range []string{kernel + "\n", "BOOT_IMAGE=/boot/vmlinuz-" + kernel, "bios\n", "no cloud-init", "cloudroot did not run", "ii  initramfs-tools", "/boot/efi vfat"} {
		if !strings.Contains(boot3, want) {
			t.Errorf("boot 3 (after the removal) lacks %q", want)
		}
	}
}
