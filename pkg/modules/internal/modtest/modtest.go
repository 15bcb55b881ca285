// Package modtest is the golden harness for modules that edit files and
// run distro commands, shared by pkg/modules and its family sub-packages.
// Each case is a directory testdata/modgolden/<module>/<case>/ (relative
// to the testing package) with
//
//	config.yaml   the cloud-config
//	distro        the name of an os-release under pkg/modules/testdata/modgolden/os
//	root/         files laid over pkg/modules/testdata/base-debian (optional)
//	              (want.txt starts with its schema findings, if any)
//	booted        present: the target is the running system (Context.Booted)
//	init          optional: the init system (systemd, openrc, sysvinit)
//	outputs.yaml  optional: stdout of commands, by argv joined with spaces
//	fail.yaml     optional: exit code of commands, by the same keys
//	fail          optional: commands (argv joined with spaces) that fail with exit code 1, one a line
//	want.txt      what the module did: commands (argv, extra environment),
//	              console output, deprecations, warnings, error, and every file created,
//	              changed or removed with its mode and content
//
// go test -run TestModuleGolden -update rewrites want.txt.
//
// modtest does not import pkg/modules (whose own tests use it): Setup
// builds the target and recorders, the testing package builds its
// modules.Context from them (Env's fields are what Context takes), runs
// the module and hands the error to Report.
package modtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg/schema"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Now is the harness's clock.
func Now() time.Time { return time.Date(2026, 11, 22, 8, 36, 48, 0, time.UTC) }

// Version is the cloud-init version a golden context reports.
const Version = "26.2-cloudroot"

// Shared is pkg/modules/testdata, where the fixtures every family shares
// live (base-debian, modgolden/os).
func Shared() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Runner records commands and answers with canned output.
type Runner struct {
	base int
	// Log is each command run: extra environment, argv, stdin size and
	// directory.
	Log []string
	// Outputs are stdout of commands, by argv joined with spaces
	// (outputs.yaml).
	Outputs map[string]string
	// Fail are exit codes of commands, by argv joined with spaces
	// (fail.yaml).
	Fail map[string]int
}

// NewRunner is a Runner for a target whose commands get the base
// environment (PATH, HOME, LANG), which the log leaves out.
func NewRunner() *Runner {
	return &Runner{base: 3, Outputs: map[string]string{}, Fail: map[string]int{}}
}

// Run implements target.Runner.
func (r *Runner) Run(_ context.Context, root string, cmd target.Cmd) error {
	line := strings.Join(cmd.Argv, " ")
	if extra := cmd.Env[min(r.base, len(cmd.Env)):]; len(extra) > 0 {
		line = strings.Join(extra, " ") + " " + line
	}
	if cmd.Stdin != nil {
		b, _ := io.ReadAll(cmd.Stdin)
		line += fmt.Sprintf(" <stdin %d bytes>", len(b))
	}
	if cmd.Dir != "" {
		line += " (in " + cmd.Dir + ")"
	}
	r.Log = append(r.Log, line)
	if out, ok := r.Outputs[strings.Join(cmd.Argv, " ")]; ok && cmd.Stdout != nil {
		io.WriteString(cmd.Stdout, out)
	}
	if code := r.Fail[strings.Join(cmd.Argv, " ")]; code != 0 {
		return &target.ExitError{Argv: cmd.Argv, Code: code}
	}
	return nil
}

// Env is a case's target and recorders.
type Env struct {
	Target *target.Root
	Runner *Runner
	// Root is the target's directory, Distro the os-release's name.
	Root, Distro string
	// Config is the case's cloud-config, CfgText its text.
	Config       map[string]any
	CfgText      []byte
	Console, Out *bytes.Buffer
	Warnings     []string
	Deprecations []string
	Booted       bool
	// Before is Snapshot of the root before the module ran.
	Before map[string]string
}

// Warn records a warning (Context.Warn).
func (e *Env) Warn(m string) { e.Warnings = append(e.Warnings, m) }

// Deprecated records a deprecation (Context.Deprecated).
func (e *Env) Deprecated(m string) { e.Deprecations = append(e.Deprecations, m) }

// Setup builds the case's target and recorders.
func Setup(t *testing.T, dir string) *Env {
	t.Helper()
	root := t.TempDir()
	CopyTree(t, filepath.Join(Shared(), "base-debian"), root)
	if _, err := os.Stat(filepath.Join(dir, "root")); err == nil {
		CopyTree(t, filepath.Join(dir, "root"), root)
	}
	dname, err := os.ReadFile(filepath.Join(dir, "distro"))
	if err != nil {
		t.Fatal(err)
	}
	osr, err := os.ReadFile(filepath.Join(Shared(), "modgolden/os", strings.TrimSpace(string(dname))))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/os-release"), osr, 0o644); err != nil {
		t.Fatal(err)
	}
	info := distro.ParseOSRelease(osr)
	// The distro's default user and three more exist.
	def := info.DefaultUserName()
	var pw, sh strings.Builder
	for i, u := range []string{def, "user1", "user2", "user3"} {
		if u == "" {
			continue
		}
		fmt.Fprintf(&pw, "%s:x:%d:%d::/home/%s:/bin/sh\n", u, 1000+i, 1000+i, u)
		fmt.Fprintf(&sh, "%s:!:19800:0:99999:7:::\n", u)
	}
	AppendFile(t, filepath.Join(root, "etc/passwd"), pw.String())
	AppendFile(t, filepath.Join(root, "etc/shadow"), sh.String())
	if b, err := os.ReadFile(filepath.Join(dir, "init")); err == nil {
		switch strings.TrimSpace(string(b)) {
		case "systemd":
			os.MkdirAll(filepath.Join(root, "lib/systemd"), 0o755)
			os.WriteFile(filepath.Join(root, "lib/systemd/systemd"), nil, 0o755)
		case "openrc":
			os.MkdirAll(filepath.Join(root, "sbin"), 0o755)
			os.WriteFile(filepath.Join(root, "sbin/openrc"), nil, 0o755)
		}
	}
	before := Snapshot(t, root)

	cfgText, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := datasource.DecodeYAMLMap(cfgText)
	if err != nil {
		t.Fatal(err)
	}
	rr := NewRunner()
	if b, err := os.ReadFile(filepath.Join(dir, "fail")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				rr.Fail[l] = 1
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "outputs.yaml")); err == nil {
		if err := yaml.Unmarshal(b, &rr.Outputs); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "fail.yaml")); err == nil {
		if err := yaml.Unmarshal(b, &rr.Fail); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := target.New(root, target.WithRunner(rr), target.WithClock(Now))
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Target: tr, Runner: rr, Root: root, Distro: strings.TrimSpace(string(dname)),
		Config: cfg, CfgText: cfgText, Console: &bytes.Buffer{}, Out: &bytes.Buffer{},
		Booted: Exists(filepath.Join(dir, "booted")), Before: before}
}

// Report is what module name did on the case, runErr the error its Run
// returned.
func (e *Env) Report(t *testing.T, name string, runErr error) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s on %s\n", name, e.Distro)
	var findings []string
	for _, f := range schema.Validate(e.CfgText, "config.yaml").Findings {
		findings = append(findings, fmt.Sprintf("%s %s: %s", f.Severity, f.Path, f.Message))
	}
	section := func(name string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n", name)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	section("schema", findings)
	cmds := make([]string, len(e.Runner.Log))
	for i, l := range e.Runner.Log {
		cmds[i] = TmpPath.ReplaceAllString(l, "<tmp>/")
	}
	section("commands", cmds)
	if e.Console.Len() > 0 {
		con := randomLine.ReplaceAllString(e.Console.String(), "$1:<random 20 characters>")
		section("console", strings.Split(strings.TrimRight(MaskRandom(con), "\n"), "\n"))
	}
	section("deprecations", e.Deprecations)
	section("warnings", e.Warnings)
	if runErr != nil {
		section("error", []string{runErr.Error()})
	}
	after := Snapshot(t, e.Root)
	var paths []string
	for p := range after {
		if e.Before[p] != after[p] {
			paths = append(paths, p)
		}
	}
	for p := range e.Before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		a, ok := after[p]
		if !ok {
			fmt.Fprintf(&b, "\n## removed %s\n", p)
			continue
		}
		fmt.Fprintf(&b, "\n## file %s\n%s", p, MaskRandom(a))
	}
	return b.String()
}

// TmpPath is a temporary directory in a command line.
var TmpPath = regexp.MustCompile(`(/var/tmp/cloud-init|/tmp)/[^/ ]+/`)

var (
	generatedHash = regexp.MustCompile(`\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}`)
	randomLine    = regexp.MustCompile(`(?m)^([a-z0-9_]+):\S{20}$`)
	semaphore     = regexp.MustCompile(`(?m)^\d+: \d+\.\d+$`)
)

// MaskRandom hides generated salts and hashes.
func MaskRandom(s string) string {
	s = semaphore.ReplaceAllString(s, "<pid>: <time>")
	return generatedHash.ReplaceAllString(s, "$$6$$<salt>$$<sha512crypt>")
}

// Snapshot maps each path under root to "mode\ncontent" (a link's target).
func Snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out["/"+rel] = "symlink -> " + l + "\n"
		case fi.IsDir():
			if rel != "." {
				out["/"+rel+"/"] = fmt.Sprintf("directory %04o\n", fi.Mode().Perm())
			}
		default:
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out["/"+rel] = fmt.Sprintf("mode %04o\n%s", fi.Mode().Perm(), c)
			if len(c) > 0 && c[len(c)-1] != '\n' {
				out["/"+rel] += "\n<no newline at end>\n"
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CopyTree copies the tree at src over dst.
func CopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			os.Remove(out)
			return os.Symlink(l, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.Remove(out)
		return os.WriteFile(out, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// AppendFile appends s to the file at p.
func AppendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// Exists reports whether p exists.
func Exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Golden runs every case of module name (testdata/modgolden/<name>/*),
// report giving what the module did on one, and compares it with the
// case's want.txt (rewritten under -update).
func Golden(t *testing.T, name string, report func(t *testing.T, dir string) string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join("testdata/modgolden", name, "*"))
	if len(dirs) == 0 {
		t.Fatalf("no golden cases for %s", name)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := report(t, dir)
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

// AccountsRoot builds a target from the shared base-debian plus an
// overlay directory (skipped when absent), with Debian's modes and owners
// on the sensitive files and the harness's clock.
func AccountsRoot(t *testing.T, overlay string) *target.Root {
	t.Helper()
	dir := t.TempDir()
	for _, src := range []string{filepath.Join(Shared(), "base-debian"), overlay} {
		if src == "" {
			continue
		}
		if _, err := os.Stat(src); err != nil {
			continue
		}
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			out := filepath.Join(dir, rel)
			if d.IsDir() {
				return os.MkdirAll(out, 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			os.Remove(out)
			return os.WriteFile(out, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fix := func(p string, mode fs.FileMode, gid int) {
		hp := filepath.Join(dir, p)
		if _, err := os.Stat(hp); err != nil {
			return
		}
		os.Chmod(hp, mode)
		if os.Geteuid() == 0 {
			os.Chown(hp, 0, gid)
		}
	}
	fix("etc/shadow", 0o640, 42)
	fix("etc/gshadow", 0o640, 42)
	fix("etc/sudoers", 0o440, 0)
	fix("etc/sudoers.d", 0o750, 0)
	fix("root", 0o700, 0)
	keys, _ := filepath.Glob(filepath.Join(dir, "etc/ssh/ssh_host_*"))
	for _, k := range keys {
		fix(strings.TrimPrefix(k, dir+"/"), 0o600, 0)
	}
	r, err := target.New(dir, target.WithClock(Now))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
