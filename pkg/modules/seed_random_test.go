package modules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSeedRandomMetadata: the datasource's random_seed follows the
// configured data, into a file of the target.
func TestSeedRandomMetadata(t *testing.T) {
	c, rr, _ := testContext(t, Config{"random_seed": map[string]any{"file": "/var/seed", "data": "cfg|"}},
		map[string]string{"/var/seed": "old|"})
	c.Meta["random_seed"] = "from-metadata"
	if err := SeedRandom.Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, c, "/var/seed"); got != "old|cfg|from-metadata" {
		t.Errorf("seed file = %q", got)
	}
	if len(rr.Calls) != 0 {
		t.Errorf("commands ran: %v", rr.Calls)
	}
}

// upstreamSeed is one case of testdata/seed-random-upstream.json
// (scripts/goldens/seed-random.py: upstream's cc_seed_random.handle on the
// same golden cases).
type upstreamSeed struct {
	Appended map[string]string `json:"appended"`
	Commands [][]string        `json:"commands"`
	Error    string            `json:"error"`
}

// TestSeedRandomUpstream runs seed_random on every golden case and requires
// upstream's appended bytes, commands (with RANDOM_SEED_FILE) and error.
func TestSeedRandomUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/seed-random-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamSeed
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/seed_random", name))
			before := map[string]string{}
			for p := range want.Appended {
				if b, err := g.c.Root.ReadFile(p); err == nil {
					before[p] = string(b)
				}
			}
			runErr := SeedRandom.Run(t.Context(), g.c)
			got := ""
			if runErr != nil {
				got = runErr.Error()
			}
			if got != want.Error {
				t.Errorf("error %q, upstream %q", got, want.Error)
			}
			for p, add := range want.Appended {
				if got := readFile(t, g.c, p); got != before[p]+add {
					t.Errorf("%s = %q, want %q", p, got, before[p]+add)
				}
			}
			var cmds []string
			for _, c := range want.Commands {
				cmds = append(cmds, strings.Join(c, " "))
			}
			if diff := cmp.Diff(cmds, g.Runner.Log, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}
