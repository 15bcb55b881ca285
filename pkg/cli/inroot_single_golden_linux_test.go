//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInRootSingleUpstream runs the agent's `single --name M --frequency
// always --file F` in a throwaway chroot of a Debian root, as
// scripts/goldens/inroot-single-goldens.py ran upstream 26.x's there for
// testdata/inroot-single/<case>/upstream.txt, and requires the same changes
// to the root, byte for byte (modes, owners, contents, deletions, HTTP
// requests, exit code). A case with an rc-differs file (saying why) is
// compared without the exit code.
//
// It needs root (unshare, overlay, tmpfs), python3, an extracted Debian 12
// root with cloud-init's dependencies in CLOUDROOT_DEBIAN_ROOT (the
// cloud-init twin's, debian-12-cloud-init-*.tar.zst in the cache) and
// upstream's templates in CLOUDINIT_SRC; it is skipped otherwise.
func TestInRootSingleUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent and runs it in chroots")
	}
	lower, src := os.Getenv("CLOUDROOT_DEBIAN_ROOT"), os.Getenv("CLOUDINIT_SRC")
	switch {
	case os.Getuid() != 0:
		t.Skip("needs root (unshare, overlay and tmpfs mounts in a private namespace)")
	case lower == "" || src == "":
		t.Skip("set CLOUDROOT_DEBIAN_ROOT (an extracted debian-12-cloud-init root) and CLOUDINIT_SRC (upstream's source, for its templates)")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	cases, _ := filepath.Abs("testdata/inroot-single")
	osdir, _ := filepath.Abs("../modules/testdata/modgolden/os")
	script, _ := filepath.Abs("../../scripts/goldens/inroot-single-goldens.py")
	dir := t.TempDir()
	agent := filepath.Join(dir, "cloudroot")
	build := exec.Command("go", "build", "-o", agent, "github.com/cloudroot/cloudroot/cmds/cloudroot")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the agent: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	run := exec.Command("python3", script, "--agent", agent, lower, cases, osdir, out)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	dirs, _ := filepath.Glob(filepath.Join(cases, "*", "upstream.txt"))
	if len(dirs) == 0 {
		t.Fatal("no cases")
	}
	for _, want := range dirs {
		cdir := filepath.Dir(want)
		name := filepath.Base(cdir)
		t.Run(name, func(t *testing.T) {
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			g, err := os.ReadFile(filepath.Join(out, name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			ws, gs := string(w), string(g)
			if _, err := os.Stat(filepath.Join(cdir, "rc-differs")); err == nil {
				ws, gs = dropRC(ws), dropRC(gs)
			}
			if d := cmp.Diff(ws, gs); d != "" {
				t.Errorf("the root after single --name %s differs from 26.x's (-want +got):\n%s", name, d)
			}
		})
	}
}

// dropRC removes the leading "rc: N" line of a record.
func dropRC(s string) string {
	if strings.HasPrefix(s, "rc: ") {
		if _, rest, ok := strings.Cut(s, "\n"); ok {
			return rest
		}
	}
	return s
}
