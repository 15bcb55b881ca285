package nocloud

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/media"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

// TestHostileSeedDisk is issue 25's reproduction: a seed made by `cloudroot
// seed make`, then corrupted, read as the boot reads a cidata disk. Before
// pkg/media, the FAT image killed the process (fatal error: out of memory,
// an unbounded fat12 getClusterList) and the ISO one panicked (slice bounds
// out of range [33:32]); now each is an error naming the device.
func TestHostileSeedDisk(t *testing.T) {
	for _, format := range []seed.Format{seed.FormatVFAT, seed.FormatISO} {
		t.Run(string(format), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "seed.img")
			dstest.HostileImage(t, p, format)
			_, err := ReadDevice(p, Overrides{})
			if !errors.Is(err, media.ErrCorrupt) {
				t.Fatalf("err = %v, want media.ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
}
