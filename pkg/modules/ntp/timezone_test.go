package ntp

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestUpstreamSetTimezone holds timezone's set_timezone to what upstream
// cloud-init's distro classes do, as recorded by scripts/goldens/distro.sh
// in pkg/distro/testdata/upstream/<case>.json: set_timezone("Europe/Berlin")
// on an image whose /etc/localtime is a link. The files it leaves and the
// commands it runs must be the same. (pkg/modules' TestUpstreamLocaleKeymap
// replays the same recordings for locale and keyboard.)
func TestUpstreamSetTimezone(t *testing.T) {
	for name, u := range modtest.UpstreamDistros(t) {
		var ops []modtest.UpstreamOp
		if json.Unmarshal(u.SetTimezone, &ops) != nil {
			continue // upstream failed here (a string error): nothing to compare
		}
		t.Run(name, func(t *testing.T) {
			tr, rr, root := modtest.UpstreamRoot(t, u)
			c := &modules.Context{Root: tr, Config: modules.Config{}, Distro: distro.Detect(tr.ReadFile),
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
				Now: modtest.Now, Version: modtest.Version, Warn: func(string) {}}
			if err := setTimezone(c, "Europe/Berlin"); err != nil {
				t.Fatal(err)
			}
			wantFiles, wantCmds := modtest.UpstreamEffects(ops, func(p string) string { return famtest.ReadFile(t, c, p) })
			gotFiles := map[string]string{}
			for p := range wantFiles {
				gotFiles[p] = modtest.EffectOf(root, p)
			}
			// Files upstream did not touch must be untouched here too.
			for _, p := range modtest.UpstreamTouched {
				if _, ok := wantFiles[p]; !ok {
					if e := modtest.EffectOf(root, p); e != "<removed>" {
						gotFiles[p] = e
					}
				}
			}
			if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
				t.Errorf("files (-upstream +cloudroot):\n%s", diff)
			}
			if diff := cmp.Diff(wantCmds, rr.Cmds); diff != "" {
				t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

// TestTimezoneUpstream runs timezone on every golden case and requires the
// files upstream's cc_timezone.handle leaves (scripts/goldens/timezone.py:
// its recorded writes, links, copies and deletes, replayed here) and its
// failures.
func TestTimezoneUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/timezone-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]struct {
		Ops   [][]string `json:"ops"`
		Error string     `json:"error"`
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := famtest.Setup(t, filepath.Join("testdata/modgolden/timezone", name))
			if runErr := Timezone.Run(t.Context(), g.C); (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			var ops []modtest.UpstreamOp
			for _, o := range want.Ops {
				ops = append(ops, modtest.UpstreamOp{FileOp: o})
			}
			wantFiles, _ := modtest.UpstreamEffects(ops, func(p string) string { return modtest.EffectOf(g.Root, p) })
			for p, content := range wantFiles {
				if got := modtest.EffectOf(g.Root, p); got != content {
					t.Errorf("%s = %q, upstream %q", p, got, content)
				}
			}
		})
	}
}
