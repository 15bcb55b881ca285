package stages

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// upstreamSeedURL is where scripts/goldens/init-stage.sh serves a boot's
// seed; its goldens write the port as PORT.
const upstreamSeedURL = "http://127.0.0.1:8931/"

// TestInstancifyGoldens boots each case of testdata/instancify and
// testdata/cloudconfigtxt (several
// boots of one disk, the NoCloud seed of each) through the NoCloud source
// and WriteInstanceLayout, and compares data/ with what upstream
// cloud-init 26.x's `init --local` + `init` left on the same boots
// (boot-N/want, from scripts/goldens/init-stage.sh): instance-id and
// previous-instance-id byte for byte; for the datasource lines, the class
// and its "[dsmode=…]" part (26.x's, which leaves the default net out), and
// whether previous-datasource is the current one (the seed part names
// the test's own root, not /var/lib/cloud/seed).
func TestInstancifyGoldens(t *testing.T) {
	// The cloud-config.txt cases record the same data/ files.
	cases, err := filepath.Glob("testdata/instancify/*")
	more, err2 := filepath.Glob("testdata/cloudconfigtxt/*")
	cases = append(cases, more...)
	if err != nil || err2 != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v %v", err, err2)
	}
	for _, cdir := range cases {
		t.Run(filepath.Base(cdir), func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			// One seed server for the case, as upstream's: it serves the
			// current boot's directory.
			var served atomic.Pointer[string]
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.FileServer(http.Dir(*served.Load())).ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			boots, _ := filepath.Glob(filepath.Join(cdir, "boot-*"))
			for _, bdir := range boots {
				run := newRoot(t, &fakeRunner{}) // /run is empty on every boot
				served.Store(&bdir)
				d := instancifyBoot(t, tr.Dir(), bdir, srv.URL+"/")
				l := Layout{IID: d.InstanceID(), Previous: PreviousInstanceID(tr), Description: d.Description(), Again: InstancifiedTwice(d)}
				if err := WriteInstanceLayout(tr, run, l); err != nil {
					t.Fatal(err)
				}
				got := map[string]string{}
				for name, p := range map[string]string{
					"instance-id": state.InstanceIDFile, "previous-instance-id": state.PrevInstanceID,
					"previous-datasource": state.PrevDatasource, "datasource": state.InstanceLink + "/datasource",
				} {
					b, err := tr.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					got[name] = string(b)
				}
				want := map[string]string{}
				for name := range got {
					b, err := os.ReadFile(filepath.Join(bdir, "want", name))
					if err != nil {
						t.Fatal(err)
					}
					want[name] = string(b)
				}
				b := filepath.Base(bdir)
				for _, n := range []string{"instance-id", "previous-instance-id"} {
					if got[n] != want[n] {
						t.Errorf("%s: data/%s = %q, upstream %q", b, n, got[n], want[n])
					}
				}
				class := func(line string) string { c, _, _ := strings.Cut(line, ":"); return c }
				if class(got["datasource"]) != class(want["datasource"]) {
					t.Errorf("%s: instance/datasource = %q, upstream %q (class differs)", b, got["datasource"], want["datasource"])
				}
				dsmode := func(line string) string {
					if _, m, ok := strings.Cut(line, "[dsmode="); ok {
						return m
					}
					return ""
				}
				if dsmode(got["datasource"]) != dsmode(want["datasource"]) {
					t.Errorf("%s: instance/datasource = %q, upstream %q (dsmode differs)", b, got["datasource"], want["datasource"])
				}
				if (got["previous-datasource"] == got["datasource"]) != (want["previous-datasource"] == want["datasource"]) {
					t.Errorf("%s: previous-datasource %q against datasource %q; upstream %q against %q",
						b, got["previous-datasource"], got["datasource"], want["previous-datasource"], want["datasource"])
				}
			}
		})
	}
}

// instancifyBoot puts bdir's seed where its cmdline says (the root's
// seed directory, or seedURL, standing in for upstreamSeedURL) and
// returns what the NoCloud source finds, bringing the "network" up when
// the source asks for it.
func instancifyBoot(t *testing.T, root, bdir, seedURL string) *datasource.Data {
	t.Helper()
	cmdline := ""
	if b, err := os.ReadFile(filepath.Join(bdir, "cmdline")); err == nil {
		cmdline = strings.TrimSpace(string(b))
	}
	seed := filepath.Join(root, "var/lib/cloud/seed/nocloud")
	if err := os.RemoveAll(seed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cmdline, upstreamSeedURL) {
		cmdline = strings.ReplaceAll(cmdline, upstreamSeedURL, seedURL)
	} else {
		if err := os.MkdirAll(seed, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"meta-data", "user-data", "vendor-data"} {
			if b, err := os.ReadFile(filepath.Join(bdir, n)); err == nil {
				if err := os.WriteFile(filepath.Join(seed, n), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	env := datasource.Env{Root: os.DirFS(root), Cmdline: bootenv.ParseCmdline(cmdline), Budget: 5 * time.Second}
	d, err := (&nocloud.Source{}).Get(context.Background(), env)
	if errors.Is(err, datasource.ErrNeedNetwork) {
		env.NetworkUp = true
		d, err = (&nocloud.Source{}).Get(context.Background(), env)
	}
	if err != nil {
		t.Fatalf("%s: %v", bdir, err)
	}
	return d
}
