package pkgmgr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// FuzzDecodeKeys feeds any cloud-config to the decoders of
// package_update_upgrade_install, apt_pipelining, apt_configure,
// yum_add_repo, zypper_add_repo and apk_configure: none may panic or
// modify the config.
func FuzzDecodeKeys(f *testing.F) {
	for _, g := range []string{"testdata/packages/*/user-data.yaml", "testdata/apt/*/user-data.yaml",
		filepath.Join(modtest.Shared(), "docs/*/example*.yaml"),
		"testdata/yum/*/user-data.yaml", "testdata/zypper/*/user-data.yaml", "testdata/apk/*/user-data.yaml"} {
		files, _ := filepath.Glob(g)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	f.Add([]byte("packages: [[a, b, c], {apt: x}, 3, {snap: [[a]]}]\nphone_home: {url: 1, post: 7, tries: x}"))
	f.Add([]byte("apt_sources: [{filename: 1}, 2, {source: x}]\napt: {sources: [1], primary: x, debconf_selections: {a: [1]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var cfg, orig map[string]any
		if yaml.Unmarshal(b, &cfg) != nil || cfg == nil {
			return
		}
		_ = yaml.Unmarshal(b, &orig)
		c := modules.Config(cfg)
		decodePackages(modtest.Typed[packagesKeys](c))
		decodeAptPipelining(modtest.Typed[aptPipeliningConfig](c))
		decodeApt(modtest.Typed[aptKeys](c))
		decodeYumRepos(modtest.Typed[yumKeys](c))
		decodeApk(modtest.Typed[apkKeys](c))
		for _, r := range decodeZypper(modtest.Typed[zypperKeys](c)).Repos {
			if id, ok := r.Get("id"); ok {
				zypperRepoFile(pyval.Str(id), r)
			}
		}
		if !cmp.Equal(orig, map[string]any(cfg)) {
			t.Fatal("config modified")
		}
	})
}

// FuzzDisableSuites: disabling suites only ever comments lines out of a
// one-line sources list, and never panics on deb822 text.
func FuzzDisableSuites(f *testing.F) {
	f.Add("deb http://m/ jammy main\ndeb [ arch=amd64 ] http://m/ jammy-updates main\n", "updates")
	f.Add("Types: deb\nURIs: http://m/\nSuites: noble noble-updates\nComponents: main\n\n# x\nTypes: deb\nSuites: noble-security\n", "security")
	f.Add("deb [\n", "release")
	f.Fuzz(func(t *testing.T, src, suite string) {
		isDeb822 := func(s string) bool { return deb822Lines().MatchString(s) && !oneLineLines().MatchString(s) }
		out := disableSuites([]string{suite}, src, "jammy", isDeb822)
		if isDeb822(src) {
			return
		}
		in := strings.SplitAfter(src, "\n")
		got := strings.SplitAfter(out, "\n")
		if len(in) != len(got) {
			t.Fatalf("%d lines became %d", len(in), len(got))
		}
		for i := range in {
			if got[i] != in[i] && got[i] != "# suite disabled by cloud-init: "+in[i] {
				t.Fatalf("line %q became %q", in[i], got[i])
			}
		}
	})
}
