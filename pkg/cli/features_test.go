package cli

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFeaturesGolden compares `features` with upstream's (scripts/goldens/cli.sh).
func TestFeaturesGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/features/want.txt")
	if err != nil {
		t.Fatal(err)
	}
	env, out, errb := newTestEnv(t.TempDir())
	code := Run(context.Background(), env, []string{"features"})
	got := fmt.Sprintf("%sexit: %d\n%s", out, code, errb)
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("features (-upstream +cloudroot):\n%s", diff)
	}
}
