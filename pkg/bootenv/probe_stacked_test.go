package bootenv

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Synthetic headers laid out as cryptsetup, LVM and mdadm write them (the
// fields Probe reads; checksums are not checked).
func TestProbeContainers(t *testing.T) {
	const size = 1 << 20
	uuid := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	const uuidStr = "01234567-89ab-cdef-0123-456789abcdef"
	le := binary.LittleEndian

	luks2 := make([]byte, size)
	copy(luks2, "LUKS\xba\xbe\x00\x02")
	copy(luks2[24:], "cryptroot")
	copy(luks2[168:], "9f0c6f1e-53a4-4e5e-9d3b-1f2e3d4c5b6a")
	luks1 := make([]byte, size)
	copy(luks1, "LUKS\xba\xbe\x00\x01")
	copy(luks1[168:], "0e1d2c3b-4a59-6877-8695-a4b3c2d1e0f9")

	lvm := make([]byte, size)
	lbl := lvm[512:1024] // sector 1, as pvcreate writes it
	copy(lbl, "LABELONE")
	le.PutUint64(lbl[8:], 1)
	le.PutUint32(lbl[20:], 32)
	copy(lbl[24:], "LVM2 001")
	copy(lbl[32:], "aBcDeF0123456789GhIjKlMnOpQrStUv")

	md12 := make([]byte, size)
	sb := md12[4096:]
	le.PutUint32(sb[0:], mdMagic)
	le.PutUint32(sb[4:], 1)
	copy(sb[16:], uuid)
	copy(sb[32:], "cloudroot:0")
	// A RAID1 1.0 member: ext4 at 0 (what it mirrors), superblock at the end.
	md10 := make([]byte, size)
	le.PutUint16(md10[1024+0x38:], 0xEF53)
	sb = md10[((size>>9)-16)&^7<<9:]
	le.PutUint32(sb[0:], mdMagic)
	le.PutUint32(sb[4:], 1)
	copy(sb[16:], uuid)
	md090 := make([]byte, size)
	sb = md090[size-64<<10:]
	le.PutUint32(sb[0:], mdMagic)
	copy(sb[20:24], uuid[:4])
	copy(sb[52:64], uuid[4:])

	for _, tc := range []struct {
		name string
		img  []byte
		want FS
	}{
		{"luks2", luks2, FS{Type: TypeLUKS, Version: "2", UUID: "9f0c6f1e-53a4-4e5e-9d3b-1f2e3d4c5b6a", Label: "cryptroot"}},
		{"luks1", luks1, FS{Type: TypeLUKS, Version: "1", UUID: "0e1d2c3b-4a59-6877-8695-a4b3c2d1e0f9"}},
		{"lvm2", lvm, FS{Type: TypeLVM, Version: "LVM2 001", UUID: "aBcDeF-0123-4567-89Gh-IjKl-MnOp-QrStUv"}},
		{"md-1.2", md12, FS{Type: TypeMD, Version: "1.2", UUID: uuidStr, Label: "cloudroot:0"}},
		{"md-1.0", md10, FS{Type: TypeMD, Version: "1.0", UUID: uuidStr}},
		{"md-0.90", md090, FS{Type: TypeMD, Version: "0.90.0", UUID: uuidStr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Probe(bytes.NewReader(tc.img), int64(len(tc.img)))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if !IsContainer(got.Type) {
				t.Errorf("IsContainer(%q) = false", got.Type)
			}
		})
	}
}
