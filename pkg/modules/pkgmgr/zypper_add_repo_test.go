package pkgmgr

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestZypperAddRepoUpstream runs testdata/zypper/<case>/user-data.yaml and
// compares /etc/zypp with upstream.txt, which upstream cloud-init wrote
// for the same case (scripts/goldens/zypper-add-repo.py).
func TestZypperAddRepoUpstream(t *testing.T) {
	cases, _ := filepath.Glob("testdata/zypper/*/user-data.yaml")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, ud := range cases {
		t.Run(filepath.Base(filepath.Dir(ud)), func(t *testing.T) {
			b, _ := os.ReadFile(ud)
			c, _, _ := testContext(t, yamlCfg(t, string(b)), map[string]string{
				"etc/os-release":               "ID=\"opensuse-leap\"\nVERSION_ID=\"15.6\"\n",
				"etc/zypp/zypp.conf":           "## zypp.conf\n[main]\n",
				"etc/zypp/repos.d/exists.repo": "[exists]\n",
			})
			if err := ZypperAddRepo.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			base := filepath.Join(c.Root.Dir(), "etc/zypp")
			var files []string
			filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			// upstream.txt lists zypp.conf first, then repos.d (os.walk order).
			for _, f := range files {
				if strings.HasSuffix(f, "zypp.conf") {
					files = append([]string{f}, removeStr(files, f)...)
					break
				}
			}
			for _, f := range files {
				body, _ := os.ReadFile(f)
				rel, _ := filepath.Rel(c.Root.Dir(), f)
				got.WriteString("--- /" + rel + "\n" + string(body))
				if len(body) > 0 && body[len(body)-1] != '\n' {
					got.WriteString("\n[no newline at end]\n")
				}
			}
			want, _ := os.ReadFile(filepath.Join(filepath.Dir(ud), "upstream.txt"))
			if d := cmp.Diff(string(want), got.String()); d != "" {
				t.Errorf("-upstream +cloudroot:\n%s", d)
			}
		})
	}
}

func removeStr(l []string, s string) []string {
	var out []string
	for _, e := range l {
		if e != s {
			out = append(out, e)
		}
	}
	return out
}

func TestZypperDocsExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(modtest.Shared(), "docs/zypper_add_repo/example*.yaml"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		c, _, _ := testContext(t, yamlCfg(t, string(b)), map[string]string{"etc/os-release": "ID=sles\nVERSION_ID=15.6\n", "etc/zypp/zypp.conf": ""})
		if err := ZypperAddRepo.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"opensuse-oss", "opensuse-oss-update"} {
			if !c.Root.Exists("/etc/zypp/repos.dir/" + id + ".repo") {
				t.Errorf("%s: %s not written", f, id)
			}
		}
	}
}

// TestZypperConfigFalseValues: zypp.conf gets only the settings whose
// value is true in Python's sense (cloud-init's `if value:`), a float
// zero included.
func TestZypperConfigFalseValues(t *testing.T) {
	c, _, _ := testContext(t, yamlCfg(t, "zypper:\n  repos: [{id: r, baseurl: 'http://r/'}]\n  config: {a: 0.0, b: 0, c: '', d: false, e: x, f: 1.5}\n"),
		map[string]string{"etc/os-release": "ID=sles\nVERSION_ID=15.6\n", "etc/zypp/zypp.conf": ""})
	if err := ZypperAddRepo.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, c, ZyppConf), "# Added via cloud.cfg\ne=x\nf=1.5"; got != want {
		t.Errorf("zypp.conf = %q, want %q", got, want)
	}
}
