package coldplug

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeSysfs is a sysfs tree in a temp dir.
type fakeSysfs struct {
	t    *testing.T
	root string
}

func newFakeSysfs(t *testing.T) *fakeSysfs {
	root := t.TempDir()
	for _, d := range []string{"devices", "bus"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &fakeSysfs{t: t, root: root}
}

// add creates device dir rel with a modalias (and a "driver" link when
// driver is set), listed in bus/<modalias prefix>/devices as the kernel
// lists it.
func (f *fakeSysfs) add(rel, modalias, driver string) {
	f.t.Helper()
	dir := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Join(dir, "power"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modalias"), []byte(modalias+"\n"), 0o444); err != nil {
		f.t.Fatal(err)
	}
	bus, _, _ := strings.Cut(modalias, ":")
	busDir := filepath.Join(f.root, "bus", bus, "devices")
	if err := os.MkdirAll(busDir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	target, err := filepath.Rel(busDir, dir)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(busDir, filepath.Base(rel))); err != nil {
		f.t.Fatal(err)
	}
	if driver != "" {
		f.bind(rel, driver)
	}
}

func (f *fakeSysfs) bind(rel, driver string) {
	f.t.Helper()
	if err := os.Symlink("../../../../bus/pci/drivers/"+driver, filepath.Join(f.root, rel, "driver")); err != nil {
		f.t.Fatal(err)
	}
}

func TestScan(t *testing.T) {
	fs := newFakeSysfs(t)
	fs.add("devices/pci0000:00/0000:00:01.0", "pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00", "virtio-pci")
	fs.add("devices/pci0000:00/0000:00:01.0/virtio0", "virtio:d00000002v00001AF4", "")
	fs.add("devices/platform/serial8250", "platform:serial8250", "serial8250")
	// A device without a modalias is not a device to match.
	if err := os.MkdirAll(filepath.Join(fs.root, "bus", "x", "devices", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Scan(fs.root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Path: "devices/pci0000:00/0000:00:01.0", Modalias: "pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00", Driver: "virtio-pci"},
		{Path: "devices/pci0000:00/0000:00:01.0/virtio0", Modalias: "virtio:d00000002v00001AF4"},
		{Path: "devices/platform/serial8250", Modalias: "platform:serial8250", Driver: "serial8250"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan -want +got:\n%s", diff)
	}
	if _, err := Scan(filepath.Join(fs.root, "nope")); err == nil {
		t.Error("Scan of a missing sysfs: no error")
	}
}

// fakeKernel "loads" modules by binding the devices they drive and, for
// bus drivers, adding the devices behind them, as the real kernel does
// asynchronously.
type fakeKernel struct {
	fs *fakeSysfs

	mu    sync.Mutex
	order []string
	fail  map[string]bool
	// on maps a module to what loading it does to sysfs.
	on map[string]func()
}

func (k *fakeKernel) load(m string) error {
	k.mu.Lock()
	k.order = append(k.order, m)
	fail := k.fail[m]
	k.mu.Unlock()
	if fail {
		return errors.New("no such device")
	}
	if f := k.on[m]; f != nil {
		f()
	}
	return nil
}

func TestRun(t *testing.T) {
	a := readFixture(t)
	fs := newFakeSysfs(t)
	const (
		virtioPCI = "devices/pci0000:00/0000:00:02.0"
		xhci      = "devices/pci0000:00/0000:00:03.0"
		pvscsi    = "devices/pci0000:00/0000:00:04.0"
		ahci      = "devices/pci0000:00/0000:00:1f.2"
	)
	fs.add(virtioPCI, "pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00", "")
	fs.add(xhci, "pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30", "")
	fs.add(ahci, "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01", "")
	// No packed module drives the PVSCSI controller.
	fs.add(pvscsi, "pci:v000015ADd000007C0sv000015ADsd000007C0bc01sc07i00", "")
	// CPU features are skipped (DefaultSkip).
	fs.add("devices/system/cpu/cpu0", "cpu:type:x86,ven0000fam0006mod003F:feature:,0000,0001", "")
	// A display without a driver is not reported: only storage and network.
	fs.add("devices/pci0000:00/0000:00:05.0", "pci:v00001234d00001111sv00001AF4sd00001100bc03sc00i00", "")

	pvscsiAliases := slices.DeleteFunc(slices.Clone(a.List()), func(al Alias) bool { return al.Module == "vmw_pvscsi" })
	pvscsiAliases = append(pvscsiAliases, Alias{Pattern: "cpu:type:x86,ven*fam*mod*:feature:*0001*", Module: "crc32c_intel"})
	k := &fakeKernel{fs: fs, fail: map[string]bool{"ahci": true}}
	k.on = map[string]func(){
		"virtio_pci": func() {
			fs.bind(virtioPCI, "virtio-pci")
			fs.add(virtioPCI+"/virtio0", "virtio:d00000002v00001AF4", "")
		},
		"virtio_blk": func() { fs.bind(virtioPCI+"/virtio0", "virtio_blk") },
		"xhci_pci": func() {
			fs.bind(xhci, "xhci_hcd")
			fs.add(xhci+"/usb1/1-1/1-1:1.0", "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00", "")
		},
		"usb_storage": func() {
			fs.bind(xhci+"/usb1/1-1/1-1:1.0", "usb-storage")
			fs.add(xhci+"/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0", "scsi:t-0x00", "")
		},
		"sd_mod": func() { fs.bind(xhci+"/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0", "sd") },
	}
	var logs bytes.Buffer
	c := New(Options{
		Sysfs:    fs.root,
		Aliases:  NewAliases(pvscsiAliases),
		Softdeps: map[string]Softdep{"usb_storage": {Pre: []string{"crc32c_generic"}}},
		Load:     k.load,
		Log:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Settle:   time.Millisecond,
	})
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantLoaded := []string{"crc32c_generic", "sd_mod", "uas", "usb_storage", "virtio_blk", "virtio_pci", "xhci_pci"}
	if diff := cmp.Diff(wantLoaded, rep.Loaded); diff != "" {
		t.Errorf("loaded -want +got:\n%s", diff)
	}
	if _, ok := rep.Failed["ahci"]; !ok || len(rep.Failed) != 1 {
		t.Errorf("failed = %v, want ahci only", rep.Failed)
	}
	// Each module is loaded once, softdeps before the module.
	k.mu.Lock()
	order := slices.Clone(k.order)
	k.mu.Unlock()
	for _, m := range append(wantLoaded, "ahci") {
		if n := strings.Count(" "+strings.Join(order, " ")+" ", " "+m+" "); n != 1 {
			t.Errorf("%s loaded %d times (%v)", m, n, order)
		}
	}
	if slices.Index(order, "crc32c_generic") > slices.Index(order, "usb_storage") {
		t.Errorf("softdep crc32c_generic loaded after usb_storage: %v", order)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Path != pvscsi {
		t.Fatalf("missing = %+v, want the PVSCSI controller", rep.Missing)
	}
	if want := "no driver for pci:v000015ADd000007C0… (VMware PVSCSI) — not in this initramfs"; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logs.String())
	}
	if rep.Rounds > DefaultRounds {
		t.Errorf("rounds = %d, bound %d", rep.Rounds, DefaultRounds)
	}

	// Watch picks up a device that appears later (a second NIC) and
	// reports nothing twice.
	fs.add("devices/pci0000:00/0000:00:06.0", "pci:v000015ADd000007B0sv000015ADsd000007B0bc02sc00i00", "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.opts.Poll = time.Millisecond
	go func() { c.Watch(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		k.mu.Lock()
		ok := slices.Contains(k.order, "vmxnet3")
		k.mu.Unlock()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if !slices.Contains(k.order, "vmxnet3") {
		t.Errorf("Watch did not load vmxnet3 for the new device: %v", k.order)
	}
	if n := strings.Count(logs.String(), "VMware PVSCSI"); n != 1 {
		t.Errorf("PVSCSI reported %d times, want once", n)
	}
}

func TestRunBounded(t *testing.T) {
	// A bus driver that keeps exposing new devices stops after Rounds.
	fs := newFakeSysfs(t)
	fs.add("devices/d0", "x:0", "")
	var list []Alias
	for i := range 20 {
		list = append(list, Alias{Pattern: "x:" + strconv.Itoa(i), Module: "m" + strconv.Itoa(i)})
	}
	var (
		mu    sync.Mutex
		loads []string
	)
	c := New(Options{
		Sysfs:   fs.root,
		Aliases: NewAliases(list),
		Load: func(m string) error {
			mu.Lock()
			defer mu.Unlock()
			loads = append(loads, m)
			n := strconv.Itoa(len(loads))
			fs.add("devices/d"+n, "x:"+n, "")
			return nil
		},
		Rounds: 3,
		Settle: time.Millisecond,
	})
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m0", "m1", "m2"}; rep.Rounds != 3 || !slices.Equal(loads, want) {
		t.Errorf("rounds = %d, loads = %v; want 3 and %v", rep.Rounds, loads, want)
	}
}

func TestParseSoftdeps(t *testing.T) {
	got, err := ParseSoftdeps(strings.NewReader("# c\nsoftdep ext4 pre: crc32c_generic crc32c-intel\nsoftdep ipmi_msghandler post: ipmi_devintf\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Softdep{
		"ext4":            {Pre: []string{"crc32c_generic", "crc32c_intel"}},
		"ipmi_msghandler": {Post: []string{"ipmi_devintf"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if _, err := ParseSoftdeps(strings.NewReader("alias x y\n")); err == nil {
		t.Error("no error for a non-softdep line")
	}
}

func FuzzParseSoftdeps(f *testing.F) {
	f.Add("softdep ext4 pre: crc32c_generic post: x\n")
	f.Add("softdep a\n#\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSoftdeps(strings.NewReader(s))
		if err != nil {
			return
		}
		for name := range m {
			if strings.Contains(name, "-") {
				t.Errorf("name %q not normalized", name)
			}
		}
	})
}
