package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// Hardware tests: the same image booted through other emulated storage
// controllers and NICs, with the generic profile's initramfs, whose drivers
// coldplug loads by modalias (docs/hardware.md). Each boot is a TCG run of
// 15-30 s; the subtests run in parallel.

// hwBootTimeout bounds a boot of the generic image: it is twice the size
// of the minimal one, and these boots run in parallel.
const hwBootTimeout = 240 * time.Second

// profileInitramfs returns build/initramfs-<profile>.cpio.gz, or skips
// (fails under CLOUDROOT_INTEGRATION=1) when it was not built.
func profileInitramfs(t *testing.T, a harness.Artifacts, profile string) string {
	t.Helper()
	p := filepath.Join(a.Dir, "initramfs-"+profile+".cpio.gz")
	if _, err := os.Stat(p); err != nil {
		msg := "no " + p + " (build it with `just initramfs-profile " + profile + "`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// TestRootControllers boots the root disk behind each storage controller
// QEMU emulates that the minimal image has no driver for (and AHCI/NVMe,
// which it has), and checks the seed was applied to it. The disk behind
// mptsas1068 needs a nonzero wwn (the harness gives it one; see
// rootDiskArgs).
func TestRootControllers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bus    string
		device string // the root's device node on the console
		driver string // what coldplug loads for it
	}{
		{harness.RootMegaSAS, "/dev/sda1", "megaraid_sas"},
		{harness.RootPVSCSI, "/dev/sda1", "vmw_pvscsi"},
		{harness.RootMPTSAS, "/dev/sda1", "mptsas"},
		{harness.RootUSB, "/dev/sda1", "usb_storage"},
		{harness.RootAHCI, "/dev/sda1", ""},
		{harness.RootNVMe, "/dev/nvme0n1p1", ""},
	} {
		t.Run(tc.bus, func(t *testing.T) {
			t.Parallel()
			v := newVM(t)
			initrd := profileInitramfs(t, v.a, "generic")
			host := "root-" + strings.ReplaceAll(tc.bus, "-", "")
			ud := strings.Replace(smallUserData, "hostname: again", "hostname: "+host, 1)
			seed := v.seed(map[string][]byte{"meta-data": meta("iid-"+host, host), "user-data": []byte(ud)}, harness.SeedVFAT)
			r := v.boot(harness.BootOptions{Timeout: hwBootTimeout, Initramfs: initrd, RootBus: tc.bus, Seed: seed, SeedKind: harness.SeedVirtio})
			wantPoweredOff(t, r)
			wantConsoleMatch(t, r, `root device root=LABEL=cloudimg-rootfs device=`+tc.device+` fstype=ext4`)
			if tc.driver != "" {
				wantConsoleMatch(t, r, `coldplug done .*loaded=\S*\b`+tc.driver+`\b`)
			}
			d := v.image()
			if h := d.hostname(); h != host {
				t.Errorf("/etc/hostname = %q, want %s", h, host)
			}
			d.wantLines("/var/log/t-runcmd.log", 1)
			d.wantStagesDone(d.status(), true)
		})
	}
}

// TestNICModels fetches a NoCloud seed over HTTP through each NIC model
// (ds=nocloud-net, the seed server behind guestfwd).
func TestNICModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ model, driver string }{
		{harness.NICVMXNET3, "vmxnet3"},
		{harness.NICE1000E, ""}, // in the floor list
		{harness.NICRTL8139, "8139cp"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			v := newVM(t)
			initrd := profileInitramfs(t, v.a, "generic")
			host := "nic-" + tc.model
			ud := strings.Replace(smallUserData, "hostname: again", "hostname: "+host, 1)
			srv, err := harness.ServeFiles(map[string][]byte{
				"/seed/meta-data": meta("iid-"+host, host),
				"/seed/user-data": []byte(ud),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			r := v.boot(harness.BootOptions{
				Timeout:   hwBootTimeout,
				Initramfs: initrd,
				NICModel:  tc.model,
				Append:    []string{"ds=nocloud-net;s=http://" + imdsIP + "/seed/"},
				GuestFwd:  imdsFwd(srv.Port()),
			})
			wantPoweredOff(t, r)
			if tc.driver != "" {
				wantConsoleMatch(t, r, `coldplug done .*loaded=\S*\b`+tc.driver+`\b`)
			}
			// Retries after a slow answer may fetch it twice under load.
			if n := srv.Count("/seed/user-data"); n < 1 {
				t.Errorf("user-data never fetched through the %s NIC", tc.model)
			}
			d := v.image()
			if h := d.hostname(); h != host {
				t.Errorf("/etc/hostname = %q, want %s", h, host)
			}
			d.wantContent(harness.InstanceIDPath, "iid-"+host+"\n")
		})
	}
}

// TestMissingStorageDriver boots the minimal image (no vmw_pvscsi) with
// the root behind a PVSCSI controller: the console names the device that
// had no driver, then the boot stops on the missing root.
func TestMissingStorageDriver(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	r := v.boot(harness.BootOptions{RootBus: harness.RootPVSCSI, Append: []string{"cloudroot.rootwait=3"}})
	wantExited(t, r)
	wantConsole(t, r,
		"no driver for pci:v000015ADd000007C0… (VMware PVSCSI) — not in this initramfs",
		"cannot mount the root filesystem")
}

// TestStackedRootStops: roots on LVM, md RAID or LUKS are recognized but
// not opened (docs/hardware.md); the boot stops saying so instead of only
// "not found". A second disk carries an LVM label or a LUKS2 header.
func TestStackedRootStops(t *testing.T) {
	t.Parallel()
	lvm := make([]byte, 1<<20)
	copy(lvm[512:], "LABELONE")
	lvm[512+20] = 32
	copy(lvm[512+24:], "LVM2 001")
	copy(lvm[512+32:], "aBcDeF0123456789GhIjKlMnOpQrStUv")
	luks := make([]byte, 1<<20)
	copy(luks, "LUKS\xba\xbe\x00\x02")
	copy(luks[168:], "9f0c6f1e-53a4-4e5e-9d3b-1f2e3d4c5b6a")
	for _, tc := range []struct {
		name   string
		disk   []byte
		append []string
		want   []string
	}{
		{"lvm", lvm, []string{"root=/dev/mapper/vg0-root", "rd.lvm.vg=vg0"}, []string{
			"root=/dev/mapper/vg0-root is a device-mapper device (LVM or LUKS): LVM volume groups are activated only when the image carries lvm",
			"LVM physical volumes found, but this initramfs has no lvm",
			`/dev/vdb is an LVM physical volume (LVM2_member uuid="aBcDeF-0123-4567-89Gh-IjKl-MnOp-QrStUv")`,
		}},
		{"luks", luks, []string{"root=UUID=9f0c6f1e-53a4-4e5e-9d3b-1f2e3d4c5b6a"}, []string{
			`/dev/vdb is a LUKS encrypted volume (crypto_LUKS uuid="9f0c6f1e-53a4-4e5e-9d3b-1f2e3d4c5b6a"), not a filesystem: this initramfs does not unlock LUKS volumes`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVM(t)
			extra := filepath.Join(v.dir, tc.name+".img")
			if err := os.WriteFile(extra, tc.disk, 0o644); err != nil {
				t.Fatal(err)
			}
			r := v.boot(harness.BootOptions{ExtraDisks: []string{extra}, Append: append(tc.append, "cloudroot.rootwait=2")})
			wantExited(t, r)
			wantConsole(t, r, append([]string{"cannot mount the root filesystem"}, tc.want...)...)
			if strings.Contains(r.Console, "switching root") {
				t.Error("the console says it switched root")
			}
		})
	}
}
