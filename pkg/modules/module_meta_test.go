package modules_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	. "github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/builtin"
)

// upstreamMeta is one module of testdata/module-meta-upstream.json
// (scripts/goldens/module-meta.py: every upstream cc_*.meta).
type upstreamMeta struct {
	ID         string   `json:"id"`
	Frequency  string   `json:"frequency"`
	Distros    []string `json:"distros"`
	ActivateBy []string `json:"activate_by_schema_keys"`
}

// metaDifferences are cloudroot's deliberate departures from upstream's
// meta, by module and field, with the reason. Anything else must match.
var metaDifferences = map[string]map[string]string{}

// TestModuleMetaUpstream checks every registered module's spec against
// upstream's meta: the name is a cc_ module of 26.x, and its frequency,
// distros (nil for ["all"]) and ActivateBy (nil for []) are upstream's,
// unless metaDifferences explains why not.
func TestModuleMetaUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/module-meta-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		Version string                  `json:"version"`
		Modules map[string]upstreamMeta `json:"modules"`
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	if len(up.Modules) == 0 {
		t.Fatal("no modules in testdata/module-meta-upstream.json")
	}
	used := map[string]map[string]bool{}
	differs := func(name, field string) bool {
		if _, ok := metaDifferences[name][field]; ok {
			if used[name] == nil {
				used[name] = map[string]bool{}
			}
			used[name][field] = true
			return true
		}
		return false
	}
	seen := map[string]bool{}
	for _, m := range builtin.Modules() {
		seen[m.Name] = true
		want, ok := up.Modules[m.Name]
		if !ok {
			t.Errorf("%s: no such module in upstream %s", m.Name, up.Version)
			continue
		}
		if want.ID != "cc_"+m.Name {
			t.Errorf("%s: upstream id %q", m.Name, want.ID)
		}
		if string(m.Frequency) != want.Frequency && !differs(m.Name, "frequency") {
			t.Errorf("%s: Frequency %q, upstream %q", m.Name, m.Frequency, want.Frequency)
		}
		wantDistros := want.Distros
		if slices.Equal(wantDistros, []string{"all"}) {
			wantDistros = nil
		}
		if !slices.Equal(m.Distros, wantDistros) && !differs(m.Name, "distros") {
			t.Errorf("%s: Distros %q, upstream %q", m.Name, m.Distros, wantDistros)
		}
		wantKeys := want.ActivateBy
		if len(wantKeys) == 0 {
			wantKeys = nil
		}
		if !slices.Equal(sorted(m.ActivateBy), sorted(wantKeys)) && !differs(m.Name, "activate_by_schema_keys") {
			t.Errorf("%s: ActivateBy %q, upstream activate_by_schema_keys %q", m.Name, m.ActivateBy, wantKeys)
		}
	}
	for name := range up.Modules {
		if !seen[name] {
			t.Logf("upstream module %s is not implemented", name)
		}
	}
	for name, fields := range metaDifferences {
		for f := range fields {
			if !used[name][f] {
				t.Errorf("metaDifferences[%s][%s] no longer differs from upstream; drop it", name, f)
			}
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// upstreamSection is one stage list of one case of
// testdata/activation/upstream.json: what upstream's run_section logged
// (INFO and up, "FILE[LEVEL]: message"), the recoverable_errors those
// lines make, and the [name, frequency] it would run.
type upstreamSection struct {
	Log         []string            `json:"log"`
	Recoverable map[string][]string `json:"recoverable"`
	Run         [][]string          `json:"run"`
	// Error is the exception that failed the stage (str(e)), if any.
	Error string `json:"error,omitempty"`
}

// TestModuleActivationUpstream holds the module list resolution and
// selection to upstream's _fixup_modules and run_section
// (scripts/goldens/module-activation.py) on the cases of
// testdata/activation/cases.yaml: names normalised, renamed, removed or not
// found, unknown frequencies, the modules left out for want of config (a
// key with a null or empty value counts as present) or of a verified
// distro; the same lines at the same levels, the same recoverable errors
// (status.json), the same modules run under the same names and frequencies.
func TestModuleActivationUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/activation/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := datasource.DecodeYAMLMap(b)
	if err != nil {
		t.Fatal(err)
	}
	ub, err := os.ReadFile("testdata/activation/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]map[string]upstreamSection
	if err := json.Unmarshal(ub, &up); err != nil {
		t.Fatal(err)
	}
	if len(up) != len(cases) {
		t.Fatalf("%d cases, %d in upstream's goldens: run scripts/goldens/module-activation.py", len(cases), len(up))
	}
	stages := map[string]Stage{"cloud_init_modules": StageInit, "cloud_config_modules": StageConfig, "cloud_final_modules": StageFinal}
	for name, sections := range up {
		t.Run(name, func(t *testing.T) {
			cfg, ok := cases[name].(map[string]any)
			if !ok {
				t.Fatalf("case %s is not a mapping", name)
			}
			for section, want := range sections {
				c, _ := NewTestContext(t, Config(cfg), builtin.Modules())
				logs, rec := captureLog(c)
				got := upstreamSection{Run: [][]string{}}
				entries, err := StageList(c.Config, stages[section])
				if err != nil {
					got.Error = err.Error()
				}
				plan := PlanStage(c, entries)
				got.Log, got.Recoverable = logs(), rec
				got.Run = append(got.Run, plan...)
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s (-upstream +cloudroot):\n%s", section, diff)
				}
			}
		})
	}
}

// captureLog points c's log at a cloud-init.log writer and its Warn and
// Deprecated at a recoverable_errors map. The function returns the lines
// logged so far at INFO and up, as "FILE[LEVEL]: message".
func captureLog(c *Context) (func() []string, map[string][]string) {
	var buf bytes.Buffer
	c.Log = slog.New(cilog.NewHandler(&buf, cilog.Options{Level: slog.LevelInfo}))
	rec := map[string][]string{}
	c.Warn = func(m string) { rec["WARNING"] = append(rec["WARNING"], m) }
	c.Deprecated = func(m string) { rec["DEPRECATED"] = append(rec["DEPRECATED"], m) }
	return func() []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if _, rest, ok := strings.Cut(l, " - "); ok {
				out = append(out, rest)
			}
		}
		return out
	}, rec
}
