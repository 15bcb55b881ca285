package secret

import (
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestMapClouds redacts real clouds' metadata shapes (testdata/clouds,
// copied from the datasources' testdata, EC2's from the IMDS documentation,
// issue25.json from issue 25 item 7) and compares the redacted leaves with
// <cloud>.redacted, one slash path a line; every other leaf must come out
// unchanged (public keys, booleans, harmless look-alikes).
func TestMapClouds(t *testing.T) {
	files, _ := filepath.Glob("testdata/clouds/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/clouds/*.json")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			in, out := leaves(m, ""), leaves(Map(m), "")
			var got []string
			for p, v := range out {
				if v == Redacted && in[p] != Redacted {
					got = append(got, p)
				}
			}
			for p, v := range in {
				if _, ok := out[p]; !ok && !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(p, g+"/") }) {
					t.Errorf("%s (%v) vanished", p, v)
				}
			}
			sort.Strings(got)
			wf := strings.TrimSuffix(f, ".json") + ".redacted"
			if golden.Update() {
				os.WriteFile(wf, []byte(strings.Join(got, "\n")+"\n"), 0o644)
			}
			wb, err := os.ReadFile(wf)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(string(wb))
			if !slices.Equal(got, want) {
				t.Errorf("redacted:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// leaves flattens v into slash path → scalar (a redacted subtree is one
// leaf holding Redacted).
func leaves(v any, p string) map[string]any {
	out := map[string]any{}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			for lp, lv := range leaves(e, strings.TrimPrefix(p+"/"+k, "/")) {
				out[lp] = lv
			}
		}
	case []any:
		for i, e := range t {
			for lp, lv := range leaves(e, p+"/"+strconv.Itoa(i)) {
				out[lp] = lv
			}
		}
	default:
		out[p] = v
	}
	return out
}
