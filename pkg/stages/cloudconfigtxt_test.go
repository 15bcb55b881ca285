package stages

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// TestCloudConfigTextGoldens runs Init on each case of
// testdata/cloudconfigtxt (a NoCloud seed: meta-data, user-data, optional
// vendor-data) and compares instance/cloud-config.txt and
// vendor-cloud-config.txt byte for byte with what upstream cloud-init
// 26.x wrote for the same seed (boot-1/want, from
// scripts/init-stage-goldens.py): the "# from N files" header, part names,
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
		})
	}
}
