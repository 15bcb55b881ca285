package harness

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestKernelCmdline(t *testing.T) {
	tests := []struct {
		extra []string
		want  string
	}{
		{nil, "console=ttyS0 root=LABEL=cloudimg-rootfs panic=-1 cloudroot.onfail=poweroff"},
		{[]string{"root=LABEL=does-not-exist", "cloudroot.rootwait=2"},
			"console=ttyS0 panic=-1 cloudroot.onfail=poweroff root=LABEL=does-not-exist cloudroot.rootwait=2"},
		{[]string{"ds=nocloud;s=file:///srv/seed/"},
			"console=ttyS0 root=LABEL=cloudimg-rootfs panic=-1 cloudroot.onfail=poweroff ds=nocloud;s=file:///srv/seed/"},
	}
	for _, tc := range tests {
		if got := KernelCmdline(tc.extra); got != tc.want {
			t.Errorf("KernelCmdline(%q) = %q, want %q", tc.extra, got, tc.want)
		}
	}
}

func TestArgs(t *testing.T) {
	base := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d,1.img"}
	for _, kind := range []string{"", SeedCDROM, SeedCDROMSCSI, SeedCDROMAHCI, SeedVirtio} {
		o := base
		if kind != "" {
			o.Seed, o.SeedKind = "/seed", kind
		}
		o.SMBIOSSerial = "ds=nocloud;h=a,b"
		args, err := o.Args()
		if err != nil {
			t.Fatalf("%q: %v", kind, err)
		}
		line := strings.Join(args, " ")
		for _, must := range []string{"-netdev user,id=n0,restrict=on", "-device virtio-net-pci,netdev=n0", "-no-reboot",
			"file=/d,,1.img,if=virtio,format=raw", "-smbios type=1,serial=ds=nocloud;h=a,,b"} {
			if !strings.Contains(line, must) {
				t.Errorf("%q: argv lacks %q:\n%s", kind, must, line)
			}
		}
		if n := strings.Count(line, "-netdev"); n != 1 {
			t.Errorf("%q: %d -netdev options, want exactly 1", kind, n)
		}
		if kind == "" && slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "seed") }) {
			t.Errorf("no seed asked, but argv has one: %s", line)
		}
		if kind == SeedCDROMAHCI && !strings.Contains(line, "file=/seed,media=cdrom") {
			t.Errorf("AHCI cdrom missing: %s", line)
		}
		if (kind == SeedCDROM || kind == SeedCDROMSCSI) && !strings.Contains(line, "scsi-cd,drive=seed") {
			t.Errorf("scsi cdrom missing: %s", line)
		}
	}
	if _, err := (BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d", Seed: "/s", SeedKind: "floppy"}).Args(); err == nil {
		t.Error("unknown seed kind accepted")
	}
	if _, err := (BootOptions{}).Args(); err == nil {
		t.Error("empty options accepted")
	}
}

func TestArgsDiskBoot(t *testing.T) {
	for _, tc := range []struct {
		name      string
		o         BootOptions
		must, not []string
	}{
		{name: "SeaBIOS", o: BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d", DiskBoot: true, Append: []string{"x=1"}},
			must: []string{"-boot order=c", "file=/d,if=virtio"}, not: []string{"-kernel", "-initrd", "-append", "-bios"}},
		{name: "OVMF", o: BootOptions{Disk: "/d", DiskBoot: true, Firmware: OVMFPath},
			must: []string{"-boot order=c", "-bios " + OVMFPath}, not: []string{"-kernel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := tc.o.Args()
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Join(args, " ")
			for _, m := range tc.must {
				if !strings.Contains(line, m) {
					t.Errorf("argv lacks %q: %s", m, line)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(line, n) {
					t.Errorf("argv has %q: %s", n, line)
				}
			}
		})
	}
	if _, err := (BootOptions{DiskBoot: true}).Args(); err == nil {
		t.Error("DiskBoot without a disk accepted")
	}
}

func TestShellQuote(t *testing.T) {
	got := ShellQuote([]string{"qemu", "-append", "console=ttyS0 ds=nocloud;s=file:///x/", "it's"})
	want := `qemu -append 'console=ttyS0 ds=nocloud;s=file:///x/' 'it'\''s'`
	if got != want {
		t.Errorf("ShellQuote = %s, want %s", got, want)
	}
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := NewLineWriter(func(s string) { got = append(got, s) })
	w.Write([]byte("a\nb"))
	w.Write([]byte("c\n\nd"))
	w.Flush()
	if want := []string{"a", "bc", "", "d"}; !slices.Equal(got, want) {
		t.Errorf("lines = %q, want %q", got, want)
	}
}

func TestParseStatus(t *testing.T) {
	b := []byte(`{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/sr0]", "stage": null,
	 "init-local": {"start": 1.5, "finished": 2.0, "errors": [], "recoverable_errors": {}},
	 "init": {"start": 2.0, "finished": 3.25, "errors": ["boom"], "recoverable_errors": {"WARNING": ["w"]}},
	 "boot_status_code": "enabled-by-generator"}}`)
	s, err := ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Datasource != "DataSourceNoCloud [seed=/dev/sr0]" || s.BootStatusCode != "enabled-by-generator" {
		t.Errorf("status = %+v", s)
	}
	if d := s.Stages["init"].Duration(); d != 1.25 {
		t.Errorf("init duration = %v, want 1.25", d)
	}
	if d := s.Stages["modules-final"].Duration(); d != -1 {
		t.Errorf("missing stage duration = %v, want -1", d)
	}
	if want := []string{"init: boom", "init: [WARNING] w"}; !slices.Equal(s.AllErrors(), want) {
		t.Errorf("AllErrors = %q, want %q", s.AllErrors(), want)
	}
	if _, err := ParseStatus([]byte(`{}`)); err == nil {
		t.Error("status without v1 accepted")
	}
}

// TestSerial1SocketArgs: the second serial port keeps the console on ttyS0
// (an explicit -serial drops -nographic's default one) and changes nothing
// in the restricted network. No VM is booted.
func TestSerial1SocketArgs(t *testing.T) {
	args, err := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d", Serial1Socket: "/tmp/a,b.sock"}.Args()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, must := range []string{
		"-netdev user,id=n0,restrict=on",
		"-chardev socket,id=serial1,path=/tmp/a,,b.sock,server=off",
		"-serial mon:stdio -serial chardev:serial1",
	} {
		if !strings.Contains(line, must) {
			t.Errorf("argv lacks %q:\n%s", must, line)
		}
	}
	if n := strings.Count(line, "-serial "); n != 2 {
		t.Errorf("%d -serial options, want 2 (ttyS0, ttyS1):\n%s", n, line)
	}
	plain, err := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d"}.Args()
	if err != nil {
		t.Fatal(err)
	}
	if l := strings.Join(plain, " "); strings.Contains(l, "-serial") || strings.Contains(l, "-chardev") {
		t.Errorf("without Serial1Socket the argv has a serial option:\n%s", l)
	}
}

func TestArgsHardware(t *testing.T) {
	base := BootOptions{Kernel: "k", Initramfs: "i", Disk: "d,1.img"}
	for _, tc := range []struct {
		root, nic string
		want      []string
	}{
		{"", "", []string{"-drive file=d,,1.img,if=virtio,format=raw", "-device virtio-net-pci,netdev=n0"}},
		{RootMegaSAS, NICVMXNET3, []string{"-device megasas-gen2,id=hba0 -drive file=d,,1.img,if=none,id=root,format=raw -device scsi-hd,drive=root,bus=hba0.0", "-device vmxnet3,netdev=n0"}},
		{RootMPTSAS, NICVirtio, []string{"-device mptsas1068,id=hba0 -drive file=d,,1.img,if=none,id=root,format=raw -device scsi-hd,drive=root,bus=hba0.0,wwn=0x5000c50015ea71ac"}},
		{RootUSB, NICRTL8139, []string{"-device qemu-xhci,id=xhci -drive file=d,,1.img,if=none,id=root,format=raw -device usb-storage,drive=root,bus=xhci.0", "-device rtl8139,netdev=n0"}},
		{RootAHCI, NICE1000E, []string{"-drive file=d,,1.img,if=none,id=root,format=raw -device ide-hd,drive=root,bus=ide.0", "-device e1000e,netdev=n0"}},
		{RootNVMe, "", []string{"-device nvme,drive=root,serial=cloudroot-root"}},
	} {
		o := base
		o.RootBus, o.NICModel = tc.root, tc.nic
		args, err := o.Args()
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Join(args, " ")
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("root %q nic %q: argv lacks %q:\n%s", tc.root, tc.nic, w, line)
			}
		}
	}
	for _, o := range []BootOptions{{RootBus: "floppy"}, {NICModel: "ne2k"}} {
		o.Kernel, o.Initramfs, o.Disk = "k", "i", "d"
		if _, err := o.Args(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestPXEArgs(t *testing.T) {
	dir := t.TempDir()
	rom := filepath.Join(dir, "virtio.rom")
	o := BootOptions{PXE: &PXE{TFTPDir: dir, BootFile: "boot.ipxe", ROM: rom}, Disk: "/tmp/empty.img"}
	args, err := o.Args()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	for _, want := range []string{"-boot order=n", ",tftp=" + dir + ",bootfile=boot.ipxe", "virtio-net-pci,romfile=" + rom + ",disable-legacy=on,netdev=n0", "file=/tmp/empty.img"} {
		if !strings.Contains(got, want) {
			t.Errorf("args lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "-kernel") {
		t.Errorf("PXE boot has -kernel:\n%s", got)
	}
	if _, err := (BootOptions{PXE: &PXE{TFTPDir: dir}}).Args(); err == nil {
		t.Error("PXE without BootFile: no error")
	}
}

func TestHostFwdArgs(t *testing.T) {
	args, err := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d", HostFwd: []HostFwd{{HostPort: 40022, GuestPort: 22}}}.Args()
	if err != nil {
		t.Fatal(err)
	}
	// Restricted as every network, listening on the host's loopback only.
	if line, want := strings.Join(args, " "), "-netdev user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:40022-:22 "; !strings.Contains(line, want) {
		t.Errorf("argv lacks %q:\n%s", want, line)
	}
	for _, bad := range []HostFwd{{HostPort: 0, GuestPort: 22}, {HostPort: 40022, GuestPort: 70000}} {
		if _, err := (BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d", HostFwd: []HostFwd{bad}}).Args(); err == nil {
			t.Errorf("hostfwd %+v: no error", bad)
		}
	}
}
