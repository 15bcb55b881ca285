package modules

// TestVendorUpstream holds the vendor modules (vendor.go's list) to what
// upstream cloud-init's handlers do on the same cases, as recorded by
// scripts/goldens/vendor.py in testdata/vendor-upstream.json: the files
// written (content and mode), files deleted, commands run in order (with
// their input size), packages installed, whether warnings were logged and
// whether the module failed.

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/target"
)

type upstreamVendor struct {
	Files     map[string]string `json:"files"`
	Modes     map[string]string `json:"modes"`
	Deleted   []string          `json:"deleted"`
	Commands  []string          `json:"commands"`
	Installed []string          `json:"installed"`
	Warnings  []string          `json:"warnings"`
	Error     string            `json:"error"`
}

var packageTools = []string{"apt-get", "dnf", "yum", "tdnf", "zypper", "apk", "pacman"}

// splitPackageCommands separates package-manager commands from the others:
// install lines give the packages installed; an update right before an
// install is part of it (upstream's install_packages is recorded as a
// list), any other update is upstream's "<update package sources>".
func splitPackageCommands(log []string) (cmds, installed []string) {
	isPkg := func(l string) (bool, []string) {
		f := strings.Fields(l)
		for i, a := range f {
			if slices.Contains(packageTools, a) {
				return true, f[i+1:]
			}
		}
		return false, nil
	}
	for i, l := range log {
		ok, rest := isPkg(l)
		if !ok {
			cmds = append(cmds, l)
			continue
		}
		switch {
		case slices.Contains(rest, "install") || slices.Contains(rest, "add"):
			after := false
			for _, a := range rest {
				if after && !strings.HasPrefix(a, "-") {
					installed = append(installed, a)
				}
				if a == "install" || a == "add" {
					after = true
				}
			}
		case i+1 < len(log):
			if next, nrest := isPkg(log[i+1]); next && (slices.Contains(nrest, "install") || slices.Contains(nrest, "add")) {
				continue
			}
			fallthrough
		default:
			cmds = append(cmds, "<update package sources>")
		}
	}
	return cmds, installed
}

// warningKey is the part of a warning both sides word alike: all of it,
// or, when it quotes a failed command's error, the text before that.
func warningKey(w string) string {
	w, _, _ = strings.Cut(w, "\n")
	if i := strings.Index(w, ": "); i >= 0 && (strings.Contains(w, "Unexpected error") || strings.Contains(w, "running ") || strings.Contains(w, "exited")) {
		return w[:i]
	}
	return w
}

// familyVendor are the vendor modules that moved to a family package,
// which compares its cases in vendor-upstream.json itself.
var familyVendor = map[string]string{"ssh_import_id": "pkg/modules/users"}

func TestVendorUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/vendor-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamVendor
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	byName := map[string]Module{}
	for _, m := range vendorModules() {
		byName[m.Name] = m
	}
	for key, want := range up {
		mod, _, _ := strings.Cut(key, "/")
		if familyVendor[mod] != "" {
			continue
		}
		m, ok := byName[mod]
		if !ok {
			t.Errorf("%s: no module %s", key, mod)
			continue
		}
		t.Run(key, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden", key))
			g.c.Meta["local-hostname"] = "myhost.example.com"
			g.c.Datasource = vendorDatasource(filepath.Join("testdata/modgolden", key))
			runErr := m.Run(t.Context(), g.c)
			if (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			if why, err := os.ReadFile(filepath.Join("testdata/modgolden", key, "differs")); err == nil {
				// A deliberate difference (docs/modules.md): cloudroot says
				// so once and does nothing.
				said := slices.ContainsFunc(g.Warnings, func(w string) bool { return strings.HasPrefix(w, "cloudroot: ") })
				if said != g.c.Config.Has("updates") || len(g.Runner.Log) > 0 {
					t.Errorf("%s: warnings %q, commands %q", strings.TrimSpace(string(why)), g.Warnings, g.Runner.Log)
				}
				return
			}
			for p, content := range want.Files {
				if slices.ContainsFunc(want.Deleted, func(d string) bool { return strings.HasPrefix(p, d+"/") }) {
					continue // written, then its directory removed
				}
				fi, err := g.c.Root.Stat(p)
				if err != nil {
					t.Errorf("%s not written: %v", p, err)
					continue
				}
				if strings.HasPrefix(p, "/var/lib/cloud/sem/") {
					continue // a semaphore: its content is pid and time
				}
				if got := readFile(t, g.c, p); got != content {
					t.Errorf("%s (-upstream +cloudroot):\n%s", p, cmp.Diff(content, got))
				}
				if m := want.Modes[p]; m != "" {
					if got := fmtMode(fi.Mode().Perm()); got != m {
						t.Errorf("%s: mode %s, upstream %s", p, got, m)
					}
				}
			}
			for _, p := range want.Deleted {
				if g.c.Root.Exists(p) {
					t.Errorf("%s not deleted", p)
				}
			}
			cmds, installed := splitPackageCommands(g.Runner.Log)
			wantCmds := want.Commands
			if exists(filepath.Join("testdata/modgolden", key, "unordered")) {
				// A mapping's order (cloudroot takes keys in name order).
				wantCmds = slices.Sorted(slices.Values(wantCmds))
				cmds = slices.Sorted(slices.Values(cmds))
			}
			if diff := cmp.Diff(wantCmds, cmds, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
			}
			if diff := cmp.Diff(want.Installed, installed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("installed (-upstream +cloudroot):\n%s", diff)
			}
			var wk, gk []string
			for _, w := range want.Warnings {
				wk = append(wk, warningKey(w))
			}
			for _, w := range g.Warnings {
				if !strings.HasPrefix(w, "cloudroot: ") { // a deliberate difference, said once
					gk = append(gk, warningKey(w))
				}
			}
			if diff := cmp.Diff(wk, gk, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

func fmtMode(m os.FileMode) string { return fmt.Sprintf("%04o", m) }

// vendorDatasource is the case's datasource (str(DataSource)) from its
// `platform` file (a datasource name: None, Ec2, NoCloud...).
func vendorDatasource(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "platform"))
	if err != nil {
		return "DataSourceNoCloud [seed=/dev/sr0]"
	}
	return "DataSource" + strings.TrimSpace(string(b))
}

// TestVendorGolden: cloudroot's own record of each vendor module case
// (testdata/modgolden/<module>/<case>/want.txt; -update rewrites).
func TestVendorGolden(t *testing.T) {
	for _, m := range vendorModules() {
		dirs, _ := filepath.Glob(filepath.Join("testdata/modgolden", m.Name, "*"))
		if len(dirs) == 0 {
			t.Errorf("no golden cases for %s", m.Name)
		}
		for _, dir := range dirs {
			t.Run(m.Name+"/"+filepath.Base(dir), func(t *testing.T) {
				g := goldenSetup(t, dir)
				g.c.Meta["local-hostname"] = "myhost.example.com"
				g.c.Datasource = vendorDatasource(dir)
				got := g.run(t, m)
				wantFile := filepath.Join(dir, "want.txt")
				if golden.Update() {
					if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(wantFile)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", wantFile, diff)
				}
			})
		}
	}
}

// nodeIDRunner is a runner whose recfgct writes a new RSCT node id.
type nodeIDRunner struct{ *modtest.Runner }

func (r *nodeIDRunner) Run(ctx context.Context, root string, cmd target.Cmd) error {
	if cmd.Argv[0] == "recfgct" {
		if err := os.WriteFile(filepath.Join(root, RSCTNodeIDFile), []byte("new-id\n"), 0o644); err != nil {
			return err
		}
	}
	return r.Runner.Run(ctx, root, cmd)
}

// TestResetRMCNewNodeID: when recfgct makes a new node id the module
// succeeds (upstream's cases only see it unchanged: the fake cannot
// rewrite the file), with RSCT's directory first in PATH.
func TestResetRMCNewNodeID(t *testing.T) {
	dir := t.TempDir()
	for p, s := range map[string]string{"etc/os-release": "ID=rhel\n", RSCTNodeIDFile: "old-id\nx\n", RSCTPath + "/.keep": ""} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	rr := &nodeIDRunner{modtest.NewRunner()}
	root, err := target.New(dir, target.WithRunner(rr))
	if err != nil {
		t.Fatal(err)
	}
	c := &Context{Root: root, Config: Config{}, Datasource: "DataSourceOpenStack", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out: io.Discard, Warn: func(m string) { t.Errorf("warning %q", m) }}
	if err := ResetRMC.Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + RSCTPath + ":" + target.DefaultPath + " "
	if diff := cmp.Diff([]string{path + "rmcctrl -z", path + "recfgct"}, rr.Log); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}
