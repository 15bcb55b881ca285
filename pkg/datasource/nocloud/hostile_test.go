package nocloud

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/media"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

// TestHostileSeedDisk is issue 25's reproduction: a seed made by `cloudroot
// seed make`, then corrupted, read as the boot reads a cidata disk. Before
// pkg/media, the FAT image killed the process (fatal error: out of memory,
// an unbounded fat12 getClusterList) and the ISO one panicked (slice bounds
// out of range [33:32]); now each is an error naming the device.
func TestHostileSeedDisk(t *testing.T) {
	md, err := seed.MetaData("", "vm1")
	if err != nil {
		t.Fatal(err)
	}
	files := seed.Files{MetaData: md, UserData: []byte("#cloud-config\n")}
	for _, tc := range []struct {
		name   string
		format seed.Format
		breaks func(img []byte)
	}{
		{"vfat root cluster chained to itself", seed.FormatVFAT, func(img []byte) {
			sector := int(binary.LittleEndian.Uint16(img[11:]))
			reserved := int(binary.LittleEndian.Uint16(img[14:]))
			fatSectors := int(binary.LittleEndian.Uint32(img[36:]))
			root := binary.LittleEndian.Uint32(img[44:])
			for i := range int(img[16]) { // both FATs
				binary.LittleEndian.PutUint32(img[(reserved+i*fatSectors)*sector+int(root)*4:], root)
			}
		}},
		{"iso root directory record flipped", seed.FormatISO, func(img []byte) {
			root := int(binary.LittleEndian.Uint32(img[16*2048+156+2:])) * 2048
			img[root+32] ^= 0xff // the "." record's name length
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "seed.img")
			if err := seed.Write(p, tc.format, files); err != nil {
				t.Fatal(err)
			}
			img, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tc.breaks(img)
			if err := os.WriteFile(p, img, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = ReadDevice(p, Overrides{})
			if !errors.Is(err, media.ErrCorrupt) {
				t.Fatalf("err = %v, want media.ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
}
