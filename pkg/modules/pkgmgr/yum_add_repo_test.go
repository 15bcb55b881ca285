package pkgmgr

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestYumAddRepoUpstream runs testdata/yum/<case>/user-data.yaml and
// compares the repo files with upstream.txt, which upstream cloud-init
// wrote for the same case (scripts/goldens/yum-add-repo.py).
func TestYumAddRepoUpstream(t *testing.T) {
	cases, _ := filepath.Glob("testdata/yum/*/user-data.yaml")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, ud := range cases {
		t.Run(filepath.Base(filepath.Dir(ud)), func(t *testing.T) {
			b, _ := os.ReadFile(ud)
			files := map[string]string{
				"etc/os-release":              "ID=\"rocky\"\nVERSION_ID=\"9.4\"\n",
				"etc/yum.repos.d/exists.repo": "[exists]\n",
			}
			c, rr, _ := testContext(t, yamlCfg(t, string(b)), files)
			if err := YumAddRepo.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			ents, _ := c.Root.ReadDir(DefaultYumRepoDir)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			slices.Sort(names)
			var got strings.Builder
			for _, n := range names {
				got.WriteString("--- " + n + "\n" + readFile(t, c, DefaultYumRepoDir+n))
			}
			want, err := os.ReadFile(filepath.Join(filepath.Dir(ud), "upstream.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), got.String()); d != "" {
				t.Errorf("-upstream +cloudroot:\n%s", d)
			}
			if len(rr.Calls) != 0 {
				t.Errorf("ran %q", rr.Calls)
			}
		})
	}
}

// TestYumAddRepoDocsExamples: cloud-init's examples write one repo each
// (example 1 into its yum_repo_dir).
func TestYumAddRepoDocsExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(modtest.Shared(), "docs/yum_add_repo/example*.yaml"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		c, _, _ := testContext(t, yamlCfg(t, string(b)), map[string]string{"etc/os-release": "ID=fedora\nVERSION_ID=41\n"})
		if err := YumAddRepo.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		dir, repos := decodeYumRepos(modtest.Typed[yumKeys](c.Config))
		if len(repos) != 1 || !c.Root.Exists(filepath.Join(dir, repos[0].ID+".repo")) {
			t.Errorf("%s: %v not written", f, repos)
		}
	}
}

func TestYumValue(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{{true, "1"}, {false, "0"}, {3, "3"}, {1.5, "1.5"}, {nil, "None"}, {[]any{"a", true}, "a\n1"}} {
		if got := yumValue(tc.v); got != tc.want {
			t.Errorf("%v: %q", tc.v, got)
		}
	}
}
