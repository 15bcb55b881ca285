package modules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/templates"
)

// withoutHeader drops a file's leading comment lines (the templates'
// wording differs there, by design).
func withoutHeader(s string) string {
	for strings.HasPrefix(s, "#") {
		_, rest, ok := strings.Cut(s, "\n")
		if !ok {
			return ""
		}
		s = rest
	}
	return s
}

// TestResolvConfUpstream renders cloudroot's resolv templates with each
// case of testdata/resolv-upstream/cases and requires what upstream's
// templates and generate_resolv_conf produced
// (scripts/goldens/resolv-conf.py), byte for byte below the header.
func TestResolvConfUpstream(t *testing.T) {
	cases, _ := filepath.Glob("testdata/resolv-upstream/cases/*.yaml")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, fn := range cases {
		name := strings.TrimSuffix(filepath.Base(fn), ".yaml")
		for _, tmpl := range []string{"resolv.conf", "systemd.resolved.conf"} {
			t.Run(name+"/"+tmpl, func(t *testing.T) {
				b, err := os.ReadFile(fn)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := datasource.DecodeYAMLMap(b)
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join("testdata/resolv-upstream/out", name, tmpl))
				if err != nil {
					t.Fatal(err)
				}
				src, _ := templates.Resolv(tmpl)
				got, err := render.Jinja(src, resolvParams(modtest.Typed[resolvConfConfig](Config(cfg)).Params, modtest.Typed[resolvConfConfig](Config(cfg)).Section.Options))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(withoutHeader(string(want)), withoutHeader(string(got))); diff != "" {
					t.Errorf("(-upstream +cloudroot):\n%s", diff)
				}
			})
		}
	}
}
