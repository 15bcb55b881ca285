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
// scripts/goldens/lib/inroot-single.py ran upstream 26.x's there for
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
	osdir, _ := filepath.Abs("../modules/testdata/modgolden/os")
	script, _ := filepath.Abs("../../scripts/goldens/lib/inroot-single.py")
	dir := t.TempDir()
	agent := filepath.Join(dir, "cloudroot")
	build := exec.Command("go", "build", "-o", agent, "github.com/cloudroot/cloudroot/cmds/cloudroot-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the agent: %v\n%s", err, out)
	}
	// inroot-single: the modules with datasource_list [None];
	// inroot-nostate: single's own lines (args, datasource.cfg: no
	// datasource, --force, an unknown module), with stdout, stderr and
	// what is left under /var/lib/cloud and /run/cloud-init.
	for _, set := range []string{"inroot-single", "inroot-nostate"} {
		t.Run(set, func(t *testing.T) {
			cases, _ := filepath.Abs(filepath.Join("testdata", set))
			out := filepath.Join(dir, set)
			os.Mkdir(out, 0o755)
			run := exec.Command("python3", script, "--agent", agent, lower, cases, osdir, out)
			if b, err := run.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", script, err, b)
			}
			compareSingleRecords(t, cases, out)
		})
	}
}

// compareSingleRecords compares each case's upstream.txt with the agent's
// record in out. A case with an rc-differs file (saying why) is compared
// without the exit code, one with state-differs without the listing of
// /var/lib/cloud and /run/cloud-init.
func compareSingleRecords(t *testing.T, cases, out string) {
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
			if _, err := os.Stat(filepath.Join(cdir, "state-differs")); err == nil {
				ws, gs = dropState(ws), dropState(gs)
			}
			if d := cmp.Diff(ws, gs); d != "" {
				t.Errorf("the root after %s differs from 26.x's (-want +got):\n%s", name, d)
			}
		})
	}
}

// dropState removes the trailing "== state" section of a record.
func dropState(s string) string {
	if i := strings.LastIndex(s, "== state\n"); i >= 0 {
		return s[:i]
	}
	return s
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
