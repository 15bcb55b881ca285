package nocloud

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

// TestGolden reads each testdata/<case>/seed directory as a seed-dir seed
// and compares Data with want.json and with what upstream cloud-init's
// NoCloud makes of the same seed (upstream-26.json).
func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			d, err := Read(os.DirFS(filepath.Join(dir, "seed")), "seed-dir (SEED)", Overrides{})
			dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
		})
	}
}
