package initramfs

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

func TestImagePath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"kernel/fs/ext4/ext4.ko", "kernel/fs/ext4/ext4.ko"},
		{"kernel/fs/ext4/ext4.ko.xz", "kernel/fs/ext4/ext4.ko"},
		{"kernel/fs/ext4/ext4.ko.zst", "kernel/fs/ext4/ext4.ko"},
		{"kernel/fs/ext4/ext4.ko.gz", "kernel/fs/ext4/ext4.ko"},
		{"kernel/fs/nls/nls_iso8859-1.ko.xz", "kernel/fs/nls/nls_iso8859_1.ko"},
		{"kernel/arch/x86/crypto/crc32c-intel.ko.zst", "kernel/arch/x86/crypto/crc32c-intel.ko"},
		{"kernel/odd/x.ko.bz2", "kernel/odd/x.ko.bz2"}, // not a compression kmod reads: kept as it is
	} {
		if got := imagePath(tc.in); got != tc.want {
			t.Errorf("imagePath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// compress returns b compressed as a module file with suffix ext has it.
func compress(t *testing.T, ext string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch ext {
	case ".xz":
		var w *xz.Writer
		if w, err = xz.NewWriter(&buf); err == nil {
			_, err = w.Write(b)
			err = firstErr(err, w.Close())
		}
	case ".zst":
		var w *zstd.Encoder
		if w, err = zstd.NewWriter(&buf); err == nil {
			_, err = w.Write(b)
			err = firstErr(err, w.Close())
		}
	case ".gz":
		w := gzip.NewWriter(&buf)
		_, err = w.Write(b)
		err = firstErr(err, w.Close())
	default:
		return b
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// TestStageDecompresses stages a tree of compressed modules (as Debian 13
// ships them: .ko.xz; .ko.zst and .ko.gz as other distributions do): the
// image holds each one decompressed under .ko, and modules.dep,
// modules.order and modules.alias name those files, so the staged tree
// resolves to the same closure.
func TestStageDecompresses(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{ // path -> module content
		"kernel/drivers/virtio/virtio.ko.zst":        "fake kernel module virtio\n",
		"kernel/drivers/virtio/virtio_ring.ko.gz":    "fake kernel module virtio_ring\n",
		"kernel/drivers/block/virtio_blk.ko.xz":      "fake kernel module virtio_blk\n",
		"kernel/fs/nls/nls_iso8859-1.ko.xz":          "fake kernel module nls_iso8859-1\n",
		"kernel/lib/crc16.ko":                        "fake kernel module crc16\n",
		"kernel/arch/x86/crypto/crc32c-intel.ko.zst": "fake kernel module crc32c-intel\n",
		"kernel/drivers/block/unrequested_blk.ko.xz": "fake kernel module unrequested_blk\n",
	}
	write := func(p string, b []byte) {
		t.Helper()
		p = filepath.Join(tree, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range files {
		_, ext, _ := cutKo(p)
		write(p, compress(t, ext, []byte(body)))
	}
	write("modules.dep", []byte(`kernel/drivers/virtio/virtio.ko.zst:
kernel/drivers/virtio/virtio_ring.ko.gz:
kernel/drivers/block/virtio_blk.ko.xz: kernel/drivers/virtio/virtio.ko.zst kernel/drivers/virtio/virtio_ring.ko.gz
kernel/fs/nls/nls_iso8859-1.ko.xz:
kernel/lib/crc16.ko:
kernel/arch/x86/crypto/crc32c-intel.ko.zst:
kernel/drivers/block/unrequested_blk.ko.xz: kernel/drivers/virtio/virtio.ko.zst
`))
	write("modules.order", []byte(`kernel/drivers/virtio/virtio.ko.zst
kernel/drivers/virtio/virtio_ring.ko.gz
kernel/drivers/block/virtio_blk.ko.xz
kernel/lib/crc16.ko
kernel/fs/nls/nls_iso8859-1.ko.xz
kernel/arch/x86/crypto/crc32c-intel.ko.zst
kernel/drivers/block/unrequested_blk.ko.xz
`))
	write("modules.alias", []byte("alias virtio:d00000002v* virtio_blk\nalias crypto-crc32c crc32c-intel\nalias virtio:d00000009v* unrequested_blk\n"))
	write("modules.softdep", nil)
	write("modules.builtin", nil)

	req := []string{"virtio_blk", "?nls_iso8859-1", "crc16", "crc32c-intel"}
	mods, err := Resolve(tree, req)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	const ver = "6.12.0-test"
	if err := Stage(tree, root, mods, ver); err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(root, "lib/modules", ver)
	for _, f := range []struct{ path, want string }{
		{"modules.dep", `kernel/drivers/virtio/virtio.ko:
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/lib/crc16.ko:
kernel/fs/nls/nls_iso8859_1.ko:
kernel/arch/x86/crypto/crc32c-intel.ko:
`},
		{"modules.order", `kernel/drivers/virtio/virtio.ko
kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/block/virtio_blk.ko
kernel/lib/crc16.ko
kernel/fs/nls/nls_iso8859_1.ko
kernel/arch/x86/crypto/crc32c-intel.ko
`},
		{"modules.alias", "# Aliases of the modules in this image (cloudroot-mkinitramfs).\nalias virtio:d00000002v* virtio_blk\nalias crypto-crc32c crc32c_intel\n"},
		{"kernel/drivers/virtio/virtio.ko", files["kernel/drivers/virtio/virtio.ko.zst"]},
		{"kernel/drivers/virtio/virtio_ring.ko", files["kernel/drivers/virtio/virtio_ring.ko.gz"]},
		{"kernel/drivers/block/virtio_blk.ko", files["kernel/drivers/block/virtio_blk.ko.xz"]},
		{"kernel/fs/nls/nls_iso8859_1.ko", files["kernel/fs/nls/nls_iso8859-1.ko.xz"]},
		{"kernel/lib/crc16.ko", files["kernel/lib/crc16.ko"]},
		{"kernel/arch/x86/crypto/crc32c-intel.ko", files["kernel/arch/x86/crypto/crc32c-intel.ko.zst"]},
	} {
		got, err := os.ReadFile(filepath.Join(kdir, f.path))
		if err != nil {
			t.Errorf("reading staged file: %v", err)
			continue
		}
		if d := cmp.Diff(f.want, string(got)); d != "" {
			t.Errorf("%s (-want +got):\n%s", f.path, d)
		}
	}
	// No compressed file is left in the image.
	err = filepath.WalkDir(kdir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, ext, ok := cutKo(p); ok && compressed(ext) {
			t.Errorf("compressed module in the image: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The staged tree resolves to the same closure (names, order, flags).
	again, err := Resolve(kdir, req)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(summary(mods), summary(again)); d != "" {
		t.Errorf("staged tree resolves differently (-orig +staged):\n%s", d)
	}

	// A compressed module that does not decompress fails the stage, naming it.
	write("kernel/drivers/block/virtio_blk.ko.xz", []byte("not xz"))
	if err := Stage(tree, t.TempDir(), mods, ver); err == nil {
		t.Error("Stage accepted a broken .ko.xz")
	}
}

// cutKo splits a module path's base name at ".ko": the stem and the
// suffix after it (".xz", "").
func cutKo(p string) (string, string, bool) {
	return strings.Cut(filepath.Base(p), ".ko")
}
