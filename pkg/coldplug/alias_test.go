package coldplug

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata/modules.alias holds the lines of Debian's 6.1.0-56-amd64
// modules.alias for the modules named below (grep of the real file); the
// modaliases are those the devices present in sysfs (Azure, AWS, GCE,
// VMware, Xen and QEMU's emulated controllers). The expected modules were
// checked with `modprobe -R` against the full tree (TestMatchModprobe
// repeats that when build/kernel exists).
var matchCases = []struct {
	name, modalias string
	want           []string
}{
	{"Azure storvsc (SCSI)", "vmbus:d96361baa104294db60572e2ffb1dc7f", []string{"hv_storvsc"}},
	{"Azure storvsc (IDE)", "vmbus:32264132cb86a2449b5c50d1417354f5", []string{"hv_storvsc"}},
	{"Azure netvsc", "vmbus:635161f83edfc546913ff2d2f965ed0e", []string{"hv_netvsc"}},
	{"Hyper-V VMBus (ACPI)", "acpi:VMBUS:", []string{"hv_vmbus"}},
	{"AWS ENA", "pci:v00001D0Fd0000EC20sv00001D0Fsd0000EC20bc02sc00i00", []string{"ena"}},
	{"AWS EBS NVMe", "pci:v00001D0Fd00008061sv00001D0Fsd00008061bc01sc08i02", []string{"nvme"}},
	{"GCE gVNIC", "pci:v00001AE0d00000042sv00001AE0sd00000058bc02sc00i00", []string{"gve"}},
	{"GCE virtio-scsi (PCI)", "pci:v00001AF4d00001004sv00001AF4sd00000008bc01sc00i00", []string{"virtio_pci"}},
	{"virtio-scsi", "virtio:d00000008v00001AF4", []string{"virtio_scsi"}},
	{"virtio-net", "virtio:d00000001v00001AF4", []string{"virtio_net"}},
	{"virtio-blk", "virtio:d00000002v00001AF4", []string{"virtio_blk"}},
	{"Xen vbd", "xen:vbd", []string{"xen_blkfront"}},
	{"Xen vif", "xen:vif", []string{"xen_netfront"}},
	{"VMware PVSCSI", "pci:v000015ADd000007C0sv000015ADsd000007C0bc01sc07i00", []string{"vmw_pvscsi"}},
	{"VMware VMXNET3", "pci:v000015ADd000007B0sv000015ADsd000007B0bc02sc00i00", []string{"vmxnet3"}},
	{"MegaRAID SAS 2108", "pci:v00001000d00000079sv00001000sd00009261bc01sc04i00", []string{"megaraid_sas"}},
	{"LSI SAS1068", "pci:v00001000d00000054sv00001000sd00008000bc01sc00i00", []string{"mptsas"}},
	{"USB mass storage (bulk-only)", "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00", []string{"uas", "usb_storage"}},
	{"xHCI", "pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30", []string{"xhci_pci"}},
	{"ICH9 AHCI", "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01", []string{"ahci"}},
	{"Intel 82574L", "pci:v00008086d000010D3sv00008086sd00000000bc02sc00i00", []string{"e1000e"}},
	{"RTL8139", "pci:v000010ECd00008139sv00001AF4sd00001100bc02sc00i00", []string{"8139cp", "8139too"}},
	{"Mellanox ConnectX-5 VF (Azure accelerated networking)", "pci:v000015B3d0000101Asv000015B3sd00000000bc02sc00i00", []string{"mlx5_core"}},
	{"SCSI disk", "scsi:t-0x00", []string{"sd_mod"}},
	{"SCSI CD-ROM", "scsi:t-0x05", []string{"sr_mod"}},
	{"no packed driver (bochs display)", "pci:v00001234d00001111sv00001AF4sd00001100bc03sc00i00", nil},
}

func readFixture(t testing.TB) *Aliases {
	t.Helper()
	a, err := ReadAliases(filepath.Join("testdata", "modules.alias"))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestMatch(t *testing.T) {
	a := readFixture(t)
	for _, tc := range matchCases {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Match(tc.modalias)
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Match(%q) -want +got:\n%s", tc.modalias, diff)
			}
		})
	}
}

// TestMatchModprobe compares Match over the whole Debian modules.alias with
// kmod's own resolution (modprobe -R), when the build's kernel is there.
func TestMatchModprobe(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "build", "kernel", "root"))
	if err != nil {
		t.Fatal(err)
	}
	ver, err := os.ReadFile(filepath.Join(root, "..", "version"))
	if err != nil {
		t.Skip("no build/kernel (run `just kernel`)")
	}
	modprobe, err := exec.LookPath("modprobe")
	if err != nil {
		if _, serr := os.Stat("/sbin/modprobe"); serr != nil {
			t.Skip("no modprobe")
		}
		modprobe = "/sbin/modprobe"
	}
	v := strings.TrimSpace(string(ver))
	a, err := ReadAliases(filepath.Join(root, "lib", "modules", v, "modules.alias"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range matchCases {
		out, _ := exec.Command(modprobe, "-d", root, "-S", v, "-R", tc.modalias).Output()
		want := strings.Fields(string(out))
		for i := range want {
			want[i] = Normalize(want[i])
		}
		slices.Sort(want)
		want = slices.Compact(want)
		got := a.Match(tc.modalias)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("%s: Match(%q) = %v, modprobe -R says %v", tc.name, tc.modalias, got, want)
		}
	}
}

func TestFnmatch(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"", "", true},
		{"", "a", false},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"a*", "a", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"*", "a/b", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"pci:v*d*sv*sd*bc01sc08i02*", "pci:v00001D0Fd00008061sv00001D0Fsd00008061bc01sc08i02", true},
		{"pci:v*d*sv*sd*bc01sc08i02*", "pci:v00001D0Fd00008061sv00001D0Fsd00008061bc01sc08i01", false},
		{"usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*", "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00", true},
		{"usb:v0BC2p2321d[0-9]*", "usb:v0BC2p2321d0100", true},
		{"usb:v0BC2p2321d[0-9]*", "usb:v0BC2p2321dA100", false},
		{"x[!0-9]", "xa", true},
		{"x[!0-9]", "x5", false},
		{"x[^a]", "xb", true},
		{"x[]]", "x]", true},
		{"x[a-]", "x-", true},
		{"x[", "x[", true},
		{"x[ab", "x[ab", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{`a\`, `a\`, true},
		{"*a*a*a", "aaaa", true},
		{"*a*a*a*", "aab", false},
	}
	for _, c := range cases {
		if got := Fnmatch(c.p, c.s); got != c.want {
			t.Errorf("Fnmatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

func TestParseAliasesErrors(t *testing.T) {
	for _, in := range []string{"alias onlypattern\n", "blah x y\n", "alias a b c\n"} {
		if _, err := ParseAliases(strings.NewReader(in)); err == nil {
			t.Errorf("ParseAliases(%q): no error", in)
		}
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		modalias string
		kind     Kind
		name     string
	}{
		{"pci:v000015ADd000007C0sv000015ADsd000007C0bc01sc07i00", Storage, "VMware PVSCSI"},
		{"pci:v00001234d00005678sv00000000sd00000000bc01sc04i00", Storage, "mass storage controller"},
		{"pci:v00001234d00005678sv00000000sd00000000bc02sc00i00", Network, "network controller"},
		{"pci:v00001234d00001111sv00001AF4sd00001100bc03sc00i00", Other, ""},
		{"vmbus:d96361baa104294db60572e2ffb1dc7f", Storage, "Hyper-V SCSI (storvsc)"},
		{"usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00", Storage, "USB mass storage"},
		{"usb:v0627p0001d0000dc00dsc00dp00ic03isc00ip00in00", Other, ""},
		{"xen:vif", Network, "Xen network interface"},
	}
	for _, c := range cases {
		k, n := Describe(c.modalias)
		if k != c.kind || n != c.name {
			t.Errorf("Describe(%q) = %q, %q; want %q, %q", c.modalias, k, n, c.kind, c.name)
		}
	}
	m := Missing{Device: Device{Modalias: "pci:v000015ADd000007C0sv000015ADsd000007C0bc01sc07i00"}, Kind: Storage, Name: "VMware PVSCSI"}
	if got, want := m.String(), "no driver for pci:v000015ADd000007C0… (VMware PVSCSI) — not in this initramfs"; got != want {
		t.Errorf("Missing.String() = %q, want %q", got, want)
	}
}

func FuzzFnmatch(f *testing.F) {
	f.Add("pci:v*d*sv*sd*bc01sc08i02*", "pci:v00001D0Fd00008061sv00001D0Fsd00008061bc01sc08i02")
	f.Add("x[!0-9]*[", "xa[")
	f.Add(`a\`, `a\`)
	f.Fuzz(func(t *testing.T, p, s string) {
		got := Fnmatch(p, s)
		// A pattern without metacharacters matches only itself.
		if !hasMeta(p) && got != (p == s) {
			t.Errorf("Fnmatch(%q, %q) = %v", p, s, got)
		}
		// "*" + p + "*" matches whatever p matches (unless p ends in a
		// lone "\", which would quote the added "*").
		if got && !strings.HasSuffix(p, `\`) && !Fnmatch("*"+p+"*", s) {
			t.Errorf("Fnmatch(*%q*, %q) = false but Fnmatch(%q) = true", p, s, p)
		}
	})
}

func FuzzParseAliases(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "modules.alias"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(raw[:2000]), "pci:v00001D0Fd0000EC20sv00001D0Fsd0000EC20bc02sc00i00")
	f.Add("alias x:* m\n# c\n\nalias x:y n\n", "x:y")
	f.Fuzz(func(t *testing.T, text, modalias string) {
		a, err := ParseAliases(strings.NewReader(text))
		if err != nil {
			return
		}
		// Match agrees with a linear scan of every pattern.
		var want []string
		for _, al := range a.List() {
			if Fnmatch(al.Pattern, modalias) && !slices.Contains(want, al.Module) {
				want = append(want, al.Module)
			}
		}
		if got := a.Match(modalias); !slices.Equal(want, got) {
			t.Errorf("Match(%q) = %v, linear scan %v", modalias, got, want)
		}
	})
}
