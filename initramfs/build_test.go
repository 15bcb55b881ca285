package initramfs

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/u-root/mkuimage/cpio"
)

// readImage decompresses and parses an image into its records, in order.
func readImage(t *testing.T, img []byte, compress string) []cpio.Record {
	t.Helper()
	var r io.Reader = bytes.NewReader(img)
	switch compress {
	case CompressGzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case CompressZstd:
		zr, err := zstd.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decompressing %s image: %v", compress, err)
	}
	recs, err := cpio.ReadAllRecords(cpio.EOFReader{RecordReader: cpio.Newc.Reader(bytes.NewReader(raw))})
	if err != nil {
		t.Fatalf("reading cpio: %v", err)
	}
	return recs
}

func content(t *testing.T, r cpio.Record) string {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
	if err != nil {
		t.Fatalf("reading %s: %v", r.Name, err)
	}
	return string(b)
}

// checkArchive verifies the invariants every image has and returns the
// records by name.
func checkArchive(t *testing.T, recs []cpio.Record, initContent string) map[string]cpio.Record {
	t.Helper()
	byName := map[string]cpio.Record{}
	for _, r := range recs {
		if _, dup := byName[r.Name]; dup {
			t.Errorf("%s twice in the archive", r.Name)
		}
		if d := path.Dir(r.Name); d != "." {
			if p, ok := byName[d]; !ok || p.Mode&cpio.S_IFMT != cpio.S_IFDIR {
				t.Errorf("%s comes before its directory %s", r.Name, d)
			}
		}
		if r.UID != 0 || r.GID != 0 {
			t.Errorf("%s owned by %d:%d, want 0:0", r.Name, r.UID, r.GID)
		}
		byName[r.Name] = r
	}

	init, ok := byName["init"]
	switch {
	case !ok:
		t.Fatal("no /init in the archive")
	case init.Mode&cpio.S_IFMT != cpio.S_IFREG:
		t.Errorf("/init mode %o, want a regular file", init.Mode)
	case init.Mode&0o111 != 0o111:
		t.Errorf("/init mode %o, want executable", init.Mode)
	case content(t, init) != initContent:
		t.Errorf("/init content differs from the init binary")
	}
	for name, dev := range map[string][2]uint64{"dev/console": {5, 1}, "dev/null": {1, 3}} {
		r, ok := byName[name]
		if !ok || r.Mode&cpio.S_IFMT != cpio.S_IFCHR || r.Rmajor != dev[0] || r.Rminor != dev[1] {
			t.Errorf("%s = %+v, want char device %d:%d", name, r.Info, dev[0], dev[1])
		}
	}
	for _, d := range EmptyDirs {
		if r, ok := byName[d]; !ok || r.Mode&cpio.S_IFMT != cpio.S_IFDIR {
			t.Errorf("directory /%s missing", d)
		}
	}
	if tmp := byName["tmp"]; tmp.Mode&0o7777 != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", tmp.Mode&0o7777)
	}
	return byName
}

func writeInit(t *testing.T) (string, string) {
	t.Helper()
	const body = "#!/bin/sh\necho dummy init\n"
	p := filepath.Join(t.TempDir(), "dummyinit")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, body
}

func TestBuildFakeTree(t *testing.T) {
	initPath, initBody := writeInit(t)
	extra := t.TempDir()
	if err := os.WriteFile(filepath.Join(extra, "agent"), []byte("agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(extra, "tree/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "tree/sub/file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/file", filepath.Join(extra, "tree/link")); err != nil {
		t.Fatal(err)
	}
	reqs, err := ParseDriverList(strings.NewReader(`
virtio_pci
virtio-rng
crc32c_generic
?crc32c-intel
virtio_blk
ext4
?nls_iso8859-1
?nvme
?~xfs
`))
	if err != nil {
		t.Fatal(err)
	}

	for _, compress := range []string{CompressGzip, CompressZstd, CompressNone} {
		t.Run(compress, func(t *testing.T) {
			var img bytes.Buffer
			st, err := Build(Config{
				KmodDir:  fakeTree,
				Version:  "6.1.0-test",
				Drivers:  reqs,
				Init:     initPath,
				Extra:    []File{{Src: filepath.Join(extra, "agent"), Dst: "usr/bin/cloudroot"}, {Src: filepath.Join(extra, "tree"), Dst: "opt/tree"}},
				Compress: compress,
			}, &img)
			if err != nil {
				t.Fatal(err)
			}
			if st.ImageBytes != int64(img.Len()) || st.Modules != 16 || st.InitBytes != int64(len(initBody)) {
				t.Errorf("stats = %+v (image %d bytes)", st, img.Len())
			}
			if compress == CompressNone && st.CPIOBytes != st.ImageBytes {
				t.Errorf("uncompressed image: cpio %d bytes, image %d bytes", st.CPIOBytes, st.ImageBytes)
			}
			byName := checkArchive(t, readImage(t, img.Bytes(), compress), initBody)

			const kdir = "lib/modules/6.1.0-test/"
			load := strings.Fields(content(t, byName[ModulesLoadPath]))
			wantLoad := []string{"virtio_pci", "virtio_rng", "crc32c_generic", "crc32c_intel", "virtio_blk", "ext4", "nls_iso8859_1"}
			if d := cmp.Diff(wantLoad, load); d != "" {
				t.Errorf("modules.load (-want +got):\n%s", d)
			}
			if slices.Index(load, "crc32c_generic") > slices.Index(load, "ext4") {
				t.Errorf("crc32c_generic after ext4 in modules.load")
			}
			// modules.alias keeps the shipped modules' lines only (no vfat).
			wantAlias := "# Aliases of the modules in this image (cloudroot-mkinitramfs).\n" +
				"alias crypto-crc32c crc32c_intel\nalias crc32c crc32c_intel\n" +
				"alias crypto-crc32c crc32c_generic\nalias crc32c crc32c_generic\n" +
				"alias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci\n"
			if d := cmp.Diff(wantAlias, content(t, byName[kdir+"modules.alias"])); d != "" {
				t.Errorf("modules.alias (-want +got):\n%s", d)
			}
			dep := content(t, byName[kdir+"modules.dep"])
			for _, line := range []string{
				"kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko\n",
				"kernel/drivers/char/hw_random/virtio-rng.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n",
				"kernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko\n",
				"kernel/fs/nls/nls_iso8859_1.ko:\n",
			} {
				if !strings.Contains(dep, line) {
					t.Errorf("modules.dep lacks %q:\n%s", line, dep)
				}
			}
			// Every modules.dep entry and dependency is in the archive.
			for _, line := range strings.Split(strings.TrimSpace(dep), "\n") {
				mod, deps, _ := strings.Cut(line, ":")
				for _, p := range append([]string{mod}, strings.Fields(deps)...) {
					if r, ok := byName[kdir+p]; !ok || r.Mode&cpio.S_IFMT != cpio.S_IFREG {
						t.Errorf("modules.dep names %s, not a file in the archive", p)
					}
				}
			}
			if got := content(t, byName["usr/bin/cloudroot"]); got != "agent" || byName["usr/bin/cloudroot"].Mode&0o777 != 0o755 {
				t.Errorf("extra agent = %q mode %o", got, byName["usr/bin/cloudroot"].Mode)
			}
			if l := byName["opt/tree/link"]; l.Mode&cpio.S_IFMT != cpio.S_IFLNK || content(t, l) != "sub/file" {
				t.Errorf("extra symlink = %+v", l.Info)
			}
			if f := byName["opt/tree/sub/file"]; f.Mode&0o777 != 0o600 {
				t.Errorf("extra file mode %o, want 600", f.Mode&0o777)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	initPath, _ := writeInit(t)
	for name, cfg := range map[string]Config{
		"missing module":   {KmodDir: fakeTree, Version: "v", Init: initPath, Drivers: []Request{{Name: "nvme"}}},
		"no init":          {KmodDir: fakeTree, Version: "v"},
		"init is a dir":    {KmodDir: fakeTree, Version: "v", Init: t.TempDir()},
		"bad compression":  {KmodDir: fakeTree, Version: "v", Init: initPath, Compress: "lz4"},
		"extra over /init": {KmodDir: fakeTree, Version: "v", Init: initPath, Extra: []File{{Src: initPath, Dst: "init"}}},
	} {
		if _, err := Build(cfg, io.Discard); err == nil {
			t.Errorf("%s: Build succeeded", name)
		}
	}
	for _, s := range []string{"a", ":b", "a:", "a:../x"} {
		if _, err := ParseFile(s); err == nil {
			t.Errorf("ParseFile(%q) succeeded", s)
		}
	}
	if f, err := ParseFile("build/cloudroot:/usr/bin/cloudroot"); err != nil || f.Dst != "usr/bin/cloudroot" {
		t.Errorf("ParseFile = %+v, %v", f, err)
	}
}

// TestBuildRealKernel builds from the kernel scripts/kernel.sh unpacked, with
// the shipped driver list, when it exists.
func TestBuildRealKernel(t *testing.T) {
	kmod := filepath.Join("..", "build", "kernel", "modules")
	if _, err := os.Stat(filepath.Join(kmod, "modules.dep")); err != nil {
		t.Skipf("no depmod'ed kernel at %s (run scripts/kernel.sh): %v", kmod, err)
	}
	reqs, err := ReadDriverList("drivers.txt")
	if err != nil {
		t.Fatal(err)
	}
	initPath, initBody := writeInit(t)
	var img bytes.Buffer
	st, err := Build(Config{KmodDir: kmod, Drivers: reqs, Init: initPath}, &img)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d modules %d bytes, cpio %d, gzip %d; notes %q", st.Version, st.Modules, st.ModuleBytes, st.CPIOBytes, st.ImageBytes, st.Notes)
	byName := checkArchive(t, readImage(t, img.Bytes(), CompressGzip), initBody)
	load := strings.Fields(content(t, byName[ModulesLoadPath]))
	for _, want := range []string{"virtio_pci", "virtio_blk", "virtio_net", "virtio_scsi", "sr_mod", "ext4", "vfat", "isofs", "nls_cp437", "nls_ascii"} {
		if !slices.Contains(load, want) {
			t.Errorf("modules.load lacks %s: %v", want, load)
		}
	}
	if i, j := slices.Index(load, "crc32c_generic"), slices.Index(load, "ext4"); i < 0 || i > j {
		t.Errorf("crc32c_generic (at %d) not before ext4 (at %d): %v", i, j, load)
	}
	kdir := "lib/modules/" + st.Version + "/"
	for _, name := range load {
		found := false
		for p := range byName {
			if strings.HasPrefix(p, kdir) && (path.Base(p) == name+".ko" || path.Base(p) == strings.ReplaceAll(name, "_", "-")+".ko") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("modules.load names %s, which u-root's prober cannot find by file name", name)
		}
	}
}
