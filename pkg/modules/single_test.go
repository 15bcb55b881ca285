package modules_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	. "github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/builtin"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// upstreamSingle is one `cloud-init single` run of
// testdata/single/upstream.json (scripts/goldens/module-single.py).
type upstreamSingle struct {
	// Log is what cloud-init logged at INFO and up ("FILE[LEVEL]: msg"),
	// main_single's closing warning included; Recoverable the
	// recoverable_errors those lines are.
	Log         []string            `json:"log"`
	Recoverable map[string][]string `json:"recoverable"`
	// WhichRan is run_single's which_ran (the name, when it resolved).
	WhichRan []string `json:"which_ran"`
	// Called: the module's handler ran (its semaphore did not stop it).
	Called bool `json:"called"`
	// Commands are the commands the handler tried (the sandbox refuses
	// the first); Sems the semaphores under /var/lib/cloud afterwards.
	Commands [][]string `json:"commands"`
	Sems     []string   `json:"sems"`
	Exit     int        `json:"exit"`
}

// singleFreqs are --frequency's names (cloud-init's FREQ_SHORT_NAMES).
var singleFreqs = map[string]state.Frequency{"instance": state.PerInstance, "always": state.PerAlways, "once": state.PerOnce}

// runSingleCase runs name as `cloud-init single` would, runs times on one
// target, and reports each run as the golden does. Each run is a process
// of its own in cloud-init: its deprecations are logged afresh.
func runSingleCase(t *testing.T, cfg Config, name string, freq state.Frequency, runs int) ([]upstreamSingle, [][][]string) {
	t.Helper()
	c, rr := NewTestContext(t, cfg, builtin.Modules())
	var out []upstreamSingle
	var cmds [][][]string
	for range runs {
		ResetDeprecations(c)
		rr.Calls = nil
		logs, rec := captureLog(c)
		res, err := RunSingle(context.Background(), c, name, freq)
		got := upstreamSingle{Called: res.Ran, WhichRan: []string{}}
		if res.Found {
			got.WhichRan = []string{name}
		}
		for _, l := range logs() {
			// cloudroot's own progress line (cloud-init's is at DEBUG).
			if !strings.Contains(l, "[INFO]: running module") {
				got.Log = append(got.Log, l)
			}
		}
		msg, exit := SingleVerdict(name, res, err)
		if msg != "" {
			got.Log = append(got.Log, "main.py[WARNING]: "+msg)
			rec["WARNING"] = append(rec["WARNING"], msg)
		}
		got.Recoverable, got.Exit = rec, exit
		got.Sems = semaphores(t, c.Root.Dir())
		out = append(out, got)
		cmds = append(cmds, rr.Calls)
	}
	return out, cmds
}

// semaphores lists the files under root's /var/lib/cloud, relative to it.
func semaphores(t *testing.T, root string) []string {
	t.Helper()
	base := filepath.Join(root, "var/lib/cloud")
	var out []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestSingleUpstream holds RunSingle (and SingleVerdict) to upstream's
// run_single on the cases of testdata/single/cases.yaml: the name resolved
// as in a module list (dashed and cc_ names, ubuntu_advantage renamed with
// its deprecation, removed and unknown names), no activation-key and no
// distro check (a module without its key runs), the semaphore of the given
// frequency named after the name as given, a second run stopped by it; the
// same lines, recoverable errors, exit and semaphores.
func TestSingleUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/single/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := datasource.DecodeYAMLMap(b)
	if err != nil {
		t.Fatal(err)
	}
	up := readSingleGoldens(t)
	if len(up) != len(cases)+1 {
		t.Fatalf("%d cases, %d in upstream's goldens: run scripts/goldens/module-single.py", len(cases), len(up)-1)
	}
	for name, cs := range cases {
		t.Run(name, func(t *testing.T) {
			var want []upstreamSingle
			if err := json.Unmarshal(up[name], &want); err != nil {
				t.Fatal(err)
			}
			m := cs.(map[string]any)
			cfg, _ := m["config"].(map[string]any)
			runs := 1
			if n, ok := m["runs"].(int); ok {
				runs = n
			}
			freq := singleFreqs[pyval.ScalarStr(m["frequency"])]
			got, _ := runSingleCase(t, Config(cfg), pyval.ScalarStr(m["name"]), freq, runs)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

// TestSingleWithoutKeysUpstream runs every module that has activation
// keys by `single` with none of them in the config, as upstream's golden
// does: the handler runs in both and takes the same semaphores. Where
// upstream's handler did nothing without its keys (no command, no write),
// cloudroot's does nothing either and logs what upstream logs; where it
// tried a command (ubuntu_autoinstall's `snap list`, refused by the
// golden's sandbox), cloudroot tries the same one first.
func TestSingleWithoutKeysUpstream(t *testing.T) {
	var every map[string]upstreamSingle
	if err := json.Unmarshal(readSingleGoldens(t)["every-activated-module-without-its-keys"], &every); err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, m := range builtin.Modules() {
		if len(m.ActivateBy) > 0 {
			ours = append(ours, m.Name)
		}
	}
	var theirs []string
	for n := range every {
		theirs = append(theirs, n)
	}
	if diff := cmp.Diff(sorted(theirs), sorted(ours)); diff != "" {
		t.Errorf("modules with activation keys (-upstream +cloudroot):\n%s", diff)
	}
	for name, want := range every {
		t.Run(name, func(t *testing.T) {
			gots, cmds := runSingleCase(t, Config{"system_info": map[string]any{"distro": "debian"}}, name, "", 1)
			got := gots[0]
			if got.Called != want.Called || !slices.Equal(got.Sems, want.Sems) {
				t.Errorf("called %v sems %v, upstream called %v sems %v", got.Called, got.Sems, want.Called, want.Sems)
			}
			if len(want.Commands) > 0 {
				if len(cmds[0]) == 0 || !slices.Equal(cmds[0][0], want.Commands[0]) {
					t.Errorf("first command %v, upstream %v", cmds[0], want.Commands[0])
				}
				return
			}
			if len(cmds[0]) > 0 {
				t.Errorf("ran %v without its keys; upstream ran nothing", cmds[0])
			}
			want.Commands = nil
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

func readSingleGoldens(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/single/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]json.RawMessage
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	return up
}
