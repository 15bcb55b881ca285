package bootenv

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureSeeds returns the decompressed prefixes of the committed images,
// leaving out those over 1 MiB (the fuzzer crawls on them; only the first
// 1 MiB + 1 is ever decompressed).
func fixtureSeeds(f *testing.F, kind string) [][]byte {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", kind, "*", "image.gz"))
	if err != nil {
		f.Fatal(err)
	}
	const limit = 1 << 20
	var out [][]byte
	for _, p := range paths {
		file, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(file)
		if err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		b, err := io.ReadAll(io.LimitReader(zr, limit+1))
		file.Close()
		if err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		if len(b) <= limit {
			out = append(out, b)
		}
	}
	return out
}

func FuzzParseCmdline(f *testing.F) {
	for _, s := range []string{
		"", "root=LABEL=x ro", `foo="bar baz" -- init args`, `"a=b c"`, "root=PARTUUID=ab/PARTNROFF=1",
		"ds=nocloud;s=http://x/;i=i;h=h ci.ds=x", `root=/dev/disk/by-label/a\x2fb`, "root=fe01 rw ro",
		"root=4294967295:1", "root=ffffffffff", `"`, `=`, "--", "cloud-init=disabled",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCmdline(s)
		for _, p := range c.Params() {
			if strings.ContainsAny(p.Key, " \t\n") && !strings.Contains(s, `"`) {
				t.Fatalf("unquoted key with white space: %q", p.Key)
			}
			c.Get(p.Key)
			c.All(p.Key)
		}
		if spec, err := c.Root(); err == nil {
			_ = spec.String()
			spec.Matches(Device{Name: "vda1", Major: spec.Major, Minor: spec.Minor})
		}
		c.DS()
		c.Disabled()
		d := ParseDSString(s)
		d.NoCloud()
		d.Network()
		// Re-parsing the kernel params we kept gives the same params when
		// no quoting was involved.
		if !strings.ContainsAny(s, `"`) {
			var parts []string
			for _, p := range c.Params() {
				parts = append(parts, tokenText(p))
			}
			again := ParseCmdline(strings.Join(parts, " "))
			if len(again.Params()) != len(c.Params()) {
				t.Fatalf("reparse: %d params, want %d", len(again.Params()), len(c.Params()))
			}
		}
	})
}

func FuzzProbe(f *testing.F) {
	for _, b := range fixtureSeeds(f, "probe") {
		f.Add(b)
	}
	f.Add(make([]byte, 4096))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := Probe(bytes.NewReader(b), int64(len(b)))
		if err == nil && fs.Type == "" {
			t.Fatal("match without a type")
		}
		// Unknown size must not change the outcome for an in-memory image,
		// except for md superblocks found from the device's end (1.0,
		// 0.90), which need the size.
		if fs.Type == TypeMD && (fs.Version == "1.0" || fs.Version == "0.90.0") {
			return
		}
		fs2, err2 := Probe(bytes.NewReader(b), 0)
		if (err == nil) != (err2 == nil) || fs != fs2 {
			t.Fatalf("size-less probe differs: %+v %v vs %+v %v", fs, err, fs2, err2)
		}
	})
}

func FuzzProbeTable(f *testing.F) {
	for _, b := range fixtureSeeds(f, "table") {
		f.Add(b, uint16(0))
	}
	f.Add(buildGPT(4096, 16, "x"), uint16(4096))
	f.Fuzz(func(t *testing.T, b []byte, ss uint16) {
		tab, err := ProbeTable(bytes.NewReader(b), int64(len(b)), int(ss))
		if err != nil {
			return
		}
		for _, p := range tab.Partitions {
			if p.Number <= 0 || p.Size < 0 || p.Start < 0 {
				t.Fatalf("bad partition %+v", p)
			}
		}
	})
}

// FuzzSMBIOSSerial: the NoCloud argument cloud-init reads from the SMBIOS
// system serial number (`-smbios type=1,serial=ds=nocloud;s=...`).
func FuzzSMBIOSSerial(f *testing.F) {
	for _, s := range []string{
		"", "ds=nocloud", "ds=nocloud;s=http://10.0.2.2:8000/;i=iid-1;h=host",
		"ds=nocloud-net;seedfrom=http://x/%s", "VMware-56 4d ds=nocloud;i=a ds=nocloud;i=b",
		"ds=;;;", "ds=nocloud;s=file:///var/tmp/seed/;local-hostname=h;instance-id=i", "ds=nocloud;i",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, serial string) {
		a, ok := DMI{ProductSerial: serial}.DS()
		if !ok {
			if strings.Contains(" "+strings.Join(strings.Fields(serial), " "), " ds=") {
				t.Fatalf("serial %q has a ds= word but DS() found none", serial)
			}
			return
		}
		for _, v := range []string{a.SeedFrom, a.InstanceID, a.Hostname} {
			if strings.ContainsAny(v, " \t\n;") {
				t.Fatalf("value %q from %q holds a separator", v, serial)
			}
		}
		a.NoCloud()
		a.Network()
	})
}
