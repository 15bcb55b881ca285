package pkgmgr

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// TestApkConfigureUpstream renders testdata/apk/<case>/user-data.yaml and
// compares /etc/apk/repositories with upstream.txt, which upstream
// cloud-init rendered from the same template and config
// (scripts/goldens/apk-configure.py); empty means nothing written.
func TestApkConfigureUpstream(t *testing.T) {
	cases, _ := filepath.Glob("testdata/apk/*/user-data.yaml")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, ud := range cases {
		t.Run(filepath.Base(filepath.Dir(ud)), func(t *testing.T) {
			b, _ := os.ReadFile(ud)
			c, rr, _ := testContext(t, yamlCfg(t, string(b)), map[string]string{"etc/os-release": "ID=alpine\nVERSION_ID=3.20.3\n"})
			if err := ApkConfigure.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			got := ""
			if b, err := c.Root.ReadFile(ApkRepositories); err == nil {
				got = string(b)
			}
			want, _ := os.ReadFile(filepath.Join(filepath.Dir(ud), "upstream.txt"))
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("-upstream +cloudroot:\n%s", d)
			}
			if len(rr.Calls) != 0 {
				t.Errorf("ran %q", rr.Calls)
			}
		})
	}
}

// TestApkConfigurePreserve: cloud-init's first example leaves the file.
func TestApkConfigurePreserve(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(modtest.Shared(), "docs/apk_configure/example1.yaml"))
	c, _, _ := testContext(t, yamlCfg(t, string(b)), map[string]string{"etc/os-release": "ID=alpine\n", "etc/apk/repositories": "mine\n"})
	if err := ApkConfigure.Run(context.Background(), c); err != nil || readFile(t, c, ApkRepositories) != "mine\n" {
		t.Errorf("err %v, file %q", err, readFile(t, c, ApkRepositories))
	}
}
