package initramfs

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// fakeModule returns a minimal relocatable ELF64 whose .modinfo section
// holds the given key=value entries, as a .ko has.
func fakeModule(entries ...string) []byte {
	modinfo := []byte(strings.Join(entries, "\x00") + "\x00")
	shstr := []byte("\x00.modinfo\x00.shstrtab\x00")
	const ehsize, shentsize = 64, 64
	modOff := uint64(ehsize)
	strOff := modOff + uint64(len(modinfo))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, ehsize)
	copy(hdr, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(hdr[16:], 1)  // ET_REL
	le.PutUint16(hdr[18:], 62) // EM_X86_64
	le.PutUint32(hdr[20:], 1)
	le.PutUint64(hdr[40:], shOff)
	le.PutUint16(hdr[52:], ehsize)
	le.PutUint16(hdr[58:], shentsize)
	le.PutUint16(hdr[60:], 3) // sections: null, .modinfo, .shstrtab
	le.PutUint16(hdr[62:], 2)
	b.Write(hdr)
	b.Write(modinfo)
	b.Write(shstr)
	b.Write(make([]byte, int(shOff)-b.Len()))
	sh := func(name, typ uint32, off, size uint64) {
		s := make([]byte, shentsize)
		le.PutUint32(s[0:], name)
		le.PutUint32(s[4:], typ)
		le.PutUint64(s[24:], off)
		le.PutUint64(s[32:], size)
		le.PutUint64(s[48:], 1)
		b.Write(s)
	}
	sh(0, 0, 0, 0)
	sh(1, 1, modOff, uint64(len(modinfo))) // SHT_PROGBITS
	sh(10, 3, strOff, uint64(len(shstr)))  // SHT_STRTAB
	return b.Bytes()
}

func TestModInfoCompressed(t *testing.T) {
	ko := fakeModule("license=GPL", "firmware=rtl_nic/rtl8168d-1.fw", "alias=pci:v000010ECd00008168sv*sd*bc*sc*i*", "firmware=rtl_nic/rtl8125a-3.fw")
	dir := t.TempDir()
	var xzb, zstb bytes.Buffer
	xw, err := xz.NewWriter(&xzb)
	if err != nil {
		t.Fatal(err)
	}
	xw.Write(ko)
	xw.Close()
	zw, err := zstd.NewWriter(&zstb)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(ko)
	zw.Close()
	want := [][2]string{{"license", "GPL"}, {"firmware", "rtl_nic/rtl8168d-1.fw"}, {"alias", "pci:v000010ECd00008168sv*sd*bc*sc*i*"}, {"firmware", "rtl_nic/rtl8125a-3.fw"}}
	for name, body := range map[string][]byte{"r8169.ko": ko, "r8169.ko.xz": xzb.Bytes(), "r8169.ko.zst": zstb.Bytes()} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ModInfo(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	if _, err := ModInfo(filepath.Join(dir, "r8169.ko.xz.missing")); err == nil {
		t.Error("no error for a missing module")
	}
}

func TestStageFirmware(t *testing.T) {
	kmod := t.TempDir()
	write := func(p string, body []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(kmod, "kernel/r8169.ko"), fakeModule("firmware=rtl_nic/rtl8168d-1.fw", "firmware=rtl_nic/rtl8125a-3.fw", "firmware=../../etc/shadow"))
	write(filepath.Join(kmod, "kernel/bnx2x.ko"), fakeModule("firmware=bnx2x/bnx2x-e2-7.13.21.0.fw"))
	write(filepath.Join(kmod, "kernel/plain.ko"), fakeModule("license=GPL"))
	fw := t.TempDir()
	write(filepath.Join(fw, "rtl_nic/rtl8168d-1.fw"), []byte("fw-8168d"))
	write(filepath.Join(fw, "bnx2x/bnx2x-e2-7.13.21.0.fw.zst"), []byte("zstd fw"))
	// Debian links some names to others.
	if err := os.Symlink("rtl8168d-1.fw", filepath.Join(fw, "rtl_nic/rtl8125a-3.fw")); err != nil {
		t.Fatal(err)
	}
	mods := []Module{{Name: "r8169", Path: "kernel/r8169.ko"}, {Name: "bnx2x", Path: "kernel/bnx2x.ko"}, {Name: "plain", Path: "kernel/plain.ko"}, {Name: "af_packet", Builtin: true}}
	dest := t.TempDir()
	st, err := StageFirmware(kmod, fw, dest, mods)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 3 || len(st.Missing) != 0 {
		t.Errorf("stats = %+v, want 3 files, none missing", st)
	}
	for p, want := range map[string]string{
		"lib/firmware/rtl_nic/rtl8168d-1.fw":           "fw-8168d",
		"lib/firmware/rtl_nic/rtl8125a-3.fw":           "fw-8168d",
		"lib/firmware/bnx2x/bnx2x-e2-7.13.21.0.fw.zst": "zstd fw",
	} {
		got, err := os.ReadFile(filepath.Join(dest, p))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", p, got, err, want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dest, "lib/firmware/rtl_nic/rtl8125a-3.fw")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("linked firmware not copied as a file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, "etc")); err == nil {
		t.Error("a firmware name escaped lib/firmware")
	}

	// Without the files: notes, no error; without the directory: nothing.
	st, err = StageFirmware(kmod, t.TempDir(), t.TempDir(), mods)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"r8169: rtl_nic/rtl8168d-1.fw", "r8169: rtl_nic/rtl8125a-3.fw", "bnx2x: bnx2x/bnx2x-e2-7.13.21.0.fw"}
	if d := cmp.Diff(want, st.Missing); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	if st, err := StageFirmware(kmod, filepath.Join(fw, "absent"), t.TempDir(), mods); err != nil || st.Files != 0 {
		t.Errorf("absent dir: %+v, %v", st, err)
	}
}

// TestFirmwareRealKernel reads the firmware r8169 declares from the real
// Debian module, when the build's kernel is there.
func TestFirmwareRealKernel(t *testing.T) {
	ko := filepath.Join("..", "build", "kernel", "modules", "kernel", "drivers", "net", "ethernet", "realtek", "r8169.ko")
	if _, err := os.Stat(ko); err != nil {
		t.Skipf("no %s (run scripts/kernel.sh)", ko)
	}
	info, err := ModInfo(ko)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info, [2]string{"firmware", "rtl_nic/rtl8168d-1.fw"}) {
		t.Errorf("r8169 .modinfo lacks firmware=rtl_nic/rtl8168d-1.fw: %v", info)
	}
}

func FuzzParseModInfo(f *testing.F) {
	f.Add([]byte("license=GPL\x00\x00\x00firmware=a.fw\x00"))
	f.Add([]byte("=x\x00noequals\x00k=v=w"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, kv := range ParseModInfo(data) {
			if kv[0] == "" || strings.ContainsAny(kv[0], "=\x00") || strings.Contains(kv[1], "\x00") {
				t.Errorf("bad entry %q", kv)
			}
		}
	})
}
