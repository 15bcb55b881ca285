package schema

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/schema-corpus/known-differences.txt")

// TestSchemaCorpus: a wrong-typed value for every key of 26.x's schema and
// every key of its top-level objects (scripts/goldens/schema-corpus.py, run
// by upstream) must be rejected as upstream rejects it: the verdict and the
// set of error paths. Documents where cloudroot still differs are listed in
// known-differences.txt; the test fails when a new one appears and when a
// listed one starts agreeing (so the list only shrinks).
func TestSchemaCorpus(t *testing.T) {
	b, err := os.ReadFile("../testdata/schema-corpus/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Key     string         `json:"key"`
		Doc     map[string]any `json:"doc"`
		Invalid bool           `json:"invalid"`
		Paths   []string       `json:"paths"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	knownPath := "../testdata/schema-corpus/known-differences.txt"
	kb, _ := os.ReadFile(knownPath)
	known := map[string]bool{}
	for _, l := range strings.Split(string(kb), "\n") {
		if k, _, _ := strings.Cut(l, "\t"); k != "" && !strings.HasPrefix(k, "#") {
			known[k] = true
		}
	}
	var differ []string
	agree := 0
	for _, c := range cases {
		doc, _ := json.Marshal(c.Doc)
		r := Validate(append([]byte("#cloud-config\n"), doc...), "corpus")
		var paths []string
		for _, f := range r.Findings {
			if f.Severity == Error && !slices.Contains(paths, f.Path) {
				paths = append(paths, f.Path)
			}
		}
		slices.Sort(paths)
		invalid := len(paths) > 0
		if invalid == c.Invalid && slices.Equal(paths, c.Paths) {
			agree++
			if known[c.Key] && !*updateCorpus {
				t.Errorf("%s now agrees with upstream: remove it from known-differences.txt", c.Key)
			}
			continue
		}
		differ = append(differ, c.Key+"\tupstream "+strings.Join(c.Paths, ",")+"\tcloudroot "+strings.Join(paths, ","))
		if !known[c.Key] && !*updateCorpus {
			t.Errorf("%s %s: upstream rejects at %v, cloudroot at %v", c.Key, doc, c.Paths, paths)
		}
	}
	t.Logf("%d of %d documents agree with upstream", agree, len(cases))
	if *updateCorpus {
		out := "# TestSchemaCorpus: documents where cloudroot's schema still differs from 26.x's\n" + strings.Join(differ, "\n") + "\n"
		if err := os.WriteFile(knownPath, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
