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

// upstreamCACerts is one case of testdata/ca-certs-upstream.json
// (scripts/goldens/ca-certs.py: upstream's cc_ca_certs.handle on the same
// golden cases).
type upstreamCACerts struct {
	Files    map[string]string `json:"files"`
	Emptied  []string          `json:"emptied"`
	Commands [][]string        `json:"commands"`
	Error    string            `json:"error"`
}

// TestCACertsUpstream runs ca_certs on every golden case and requires
// upstream's files (byte for byte), emptied directories, commands and
// failure (upstream's message for a non-mapping is a broken f-string,
// "unexpected type: {ca_cert_cfg}"; cloudroot names the type).
func TestCACertsUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/ca-certs-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamCACerts
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/ca_certs", name))
			runErr := CACerts.Run(t.Context(), g.c)
			if (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			for p, content := range want.Files {
				if got := readFile(t, g.c, p); got != content {
					t.Errorf("%s (-upstream +cloudroot):\n%s", p, cmp.Diff(content, got))
				}
			}
			for _, d := range want.Emptied {
				if ents, err := g.c.Root.ReadDir(d); err != nil || len(ents) != countUnder(want.Files, d) {
					t.Errorf("%s not emptied: %v %v", d, ents, err)
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

// countUnder is how many entries directly under dir the written files add
// back (the store's anchors/ directory, say).
func countUnder(files map[string]string, dir string) int {
	seen := map[string]bool{}
	for p := range files {
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, "/")+"/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			seen[first] = true
		}
	}
	return len(seen)
}
