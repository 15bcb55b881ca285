package stages

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// TestCloudConfigTextGoldens runs Init on each case of
// testdata/cloudconfigtxt (a NoCloud seed: meta-data, user-data, optional
// vendor-data) and compares instance/cloud-config.txt and
// vendor-cloud-config.txt byte for byte with what upstream cloud-init
// 26.x wrote for the same seed (boot-1/want, from
// scripts/goldens/init-stage.sh): the "# from N files" header, part names,
// refused parts and PyYAML's layout.
func TestCloudConfigTextGoldens(t *testing.T) {
	cases, err := filepath.Glob("testdata/cloudconfigtxt/*/boot-1")
	more, err2 := filepath.Glob("testdata/instancify/*/boot-1") // "#cloud-config {}" user-data
	cases = append(cases, more...)
	if err != nil || err2 != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v %v", err, err2)
	}
	for _, bdir := range cases {
		t.Run(filepath.Base(filepath.Dir(bdir)), func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			run := newRoot(t, &fakeRunner{})
			srv := httptest.NewServer(http.FileServer(http.Dir(bdir)))
			defer srv.Close()
			d := instancifyBoot(t, tr.Dir(), bdir, srv.URL+"/")
			var s state.State
			st := state.NewStatus()
			if err := Init(context.Background(), initOpts(tr, run, d), st.Get(state.StageInit), &s); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"cloud-config.txt", "vendor-cloud-config.txt"} {
				want, werr := os.ReadFile(filepath.Join(bdir, "want", name))
				got, gerr := tr.ReadFile(state.InstanceLink + "/" + name)
				if os.IsNotExist(werr) != os.IsNotExist(gerr) {
					t.Errorf("%s: upstream wrote it: %v; cloudroot: %v", name, werr == nil, gerr == nil)
					continue
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s differs from upstream (-upstream +cloudroot):\n%s", name, diff)
				}
			}
			compareRecoverable(t, bdir, st.Get(state.StageInit).RecoverableErrors)
		})
	}
}

// compareRecoverable compares the init stage's recoverable errors with
// what upstream recorded in status.json for the same seed
// (want/recoverable-errors.json: init-local's and init's). cloudroot's init
// stage is cloud-init's two: upstream's init-local entries come first.
func compareRecoverable(t *testing.T, bdir string, got map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bdir, "want", "recoverable-errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]map[string][]string
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, stage := range []string{"init-local", "init"} {
		for lvl, msgs := range up[stage] {
			want[lvl] = append(want[lvl], msgs...)
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("init recoverable_errors differ from upstream (-upstream +cloudroot):\n%s", diff)
	}
}
