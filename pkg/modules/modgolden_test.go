package modules

// A golden harness for modules that edit files and run distro commands:
// each case is a directory testdata/modgolden/<module>/<case>/ with
//
//	config.yaml   the cloud-config
//	distro        the name of an os-release under testdata/modgolden/os
//	root/         files laid over testdata/base-debian (optional)
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

import (
	"bytes"
	"context"
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg/schema"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// goldenRunner records commands and answers with canned output.
type goldenRunner struct {
	base    int
	log     []string
	outputs map[string]string
	// fail are exit codes of commands, by argv joined with spaces
	// (fail.yaml).
	fail map[string]int
}

func (r *goldenRunner) Run(_ context.Context, root string, cmd target.Cmd) error {
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
	r.log = append(r.log, line)
	if out, ok := r.outputs[strings.Join(cmd.Argv, " ")]; ok && cmd.Stdout != nil {
		io.WriteString(cmd.Stdout, out)
	}
	if code := r.fail[strings.Join(cmd.Argv, " ")]; code != 0 {
		return &target.ExitError{Argv: cmd.Argv, Code: code}
	}
	return nil
}

// goldenCase runs module m on the case in dir and returns the report.
func goldenCase(t *testing.T, m Module, dir string) string {
	t.Helper()
	g := goldenSetup(t, dir)
	return g.run(t, m)
}

// goldenRun is a case's target and recorders.
type goldenRun struct {
	c                *Context
	rr               *goldenRunner
	root, distroName string
	cfgText          []byte
	console, out     *bytes.Buffer
	warnings         *[]string
	deprecations     *[]string
	before           map[string]string
}

// goldenSetup builds the case's target and context.
func goldenSetup(t *testing.T, dir string) *goldenRun {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "testdata/base-debian", root)
	if _, err := os.Stat(filepath.Join(dir, "root")); err == nil {
		copyTree(t, filepath.Join(dir, "root"), root)
	}
	dname, err := os.ReadFile(filepath.Join(dir, "distro"))
	if err != nil {
		t.Fatal(err)
	}
	osr, err := os.ReadFile(filepath.Join("testdata/modgolden/os", strings.TrimSpace(string(dname))))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/os-release"), osr, 0o644); err != nil {
		t.Fatal(err)
	}
	info := distro.ParseOSRelease(osr)
	// The distro's default user and three more exist.
	def, _ := info.DefaultUser()["name"].(string)
	var pw, sh strings.Builder
	for i, u := range []string{def, "user1", "user2", "user3"} {
		if u == "" {
			continue
		}
		fmt.Fprintf(&pw, "%s:x:%d:%d::/home/%s:/bin/sh\n", u, 1000+i, 1000+i, u)
		fmt.Fprintf(&sh, "%s:!:19800:0:99999:7:::\n", u)
	}
	appendFile(t, filepath.Join(root, "etc/passwd"), pw.String())
	appendFile(t, filepath.Join(root, "etc/shadow"), sh.String())
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
	before := snapshot(t, root)

	cfgText, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m0, err := datasource.DecodeYAMLMap(cfgText)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config(m0)
	rr := &goldenRunner{base: 3, outputs: map[string]string{}, fail: map[string]int{}}
	if b, err := os.ReadFile(filepath.Join(dir, "fail")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				rr.fail[l] = 1
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "outputs.yaml")); err == nil {
		if err := yaml.Unmarshal(b, &rr.outputs); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "fail.yaml")); err == nil {
		if err := yaml.Unmarshal(b, &rr.fail); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := target.New(root, target.WithRunner(rr), target.WithClock(func() time.Time { return accountsNow }))
	if err != nil {
		t.Fatal(err)
	}
	var console, out bytes.Buffer
	warnings := &[]string{}
	deprecations := &[]string{}
	c := &Context{
		Root: tr, Config: cfg, Meta: map[string]any{"instance-id": "iid-test"}, InstanceID: "iid-test",
		Distro: distro.Detect(tr.ReadFile), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out: &out, Console: &console, Now: func() time.Time { return accountsNow }, Uptime: func() float64 { return 1 },
		Version: "26.2-cloudroot", Warn: func(m string) { *warnings = append(*warnings, m) },
		Deprecated: func(m string) { *deprecations = append(*deprecations, m) },
		Booted:     exists(filepath.Join(dir, "booted")),
	}
	return &goldenRun{c: c, rr: rr, root: root, distroName: strings.TrimSpace(string(dname)), cfgText: cfgText,
		console: &console, out: &out, warnings: warnings, deprecations: deprecations, before: before}
}

// run runs m and reports what it did.
func (g *goldenRun) run(t *testing.T, m Module) string {
	t.Helper()
	c, rr, root, cfgText, console, before := g.c, g.rr, g.root, g.cfgText, g.console, g.before
	warnings := *g.warnings
	dname := g.distroName
	runErr := m.Run(t.Context(), c)
	warnings = *g.warnings

	var b strings.Builder
	fmt.Fprintf(&b, "# %s on %s\n", m.Name, dname)
	var findings []string
	for _, f := range schema.Validate(cfgText, "config.yaml").Findings {
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
	cmds := make([]string, len(rr.log))
	for i, l := range rr.log {
		cmds[i] = tmpPath.ReplaceAllString(l, "<tmp>/")
	}
	section("commands", cmds)
	if console.Len() > 0 {
		con := randomLine.ReplaceAllString(console.String(), "$1:<random 20 characters>")
		section("console", strings.Split(strings.TrimRight(maskRandom(con), "\n"), "\n"))
	}
	section("deprecations", *g.deprecations)
	section("warnings", warnings)
	if runErr != nil {
		section("error", []string{runErr.Error()})
	}
	after := snapshot(t, root)
	var paths []string
	for p := range after {
		if before[p] != after[p] {
			paths = append(paths, p)
		}
	}
	for p := range before {
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
		fmt.Fprintf(&b, "\n## file %s\n%s", p, maskRandom(a))
	}
	return b.String()
}

var (
	generatedHash = regexp.MustCompile(`\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}`)
	randomLine    = regexp.MustCompile(`(?m)^([a-z0-9_]+):\S{20}$`)
	semaphore     = regexp.MustCompile(`(?m)^\d+: \d+\.\d+$`)
)

// maskRandom hides generated salts and hashes.
func maskRandom(s string) string {
	s = semaphore.ReplaceAllString(s, "<pid>: <time>")
	return generatedHash.ReplaceAllString(s, "$$6$$<salt>$$<sha512crypt>")
}

// snapshot maps each path under root to "mode\ncontent" (a link's target).
func snapshot(t *testing.T, root string) map[string]string {
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

func copyTree(t *testing.T, src, dst string) {
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

func appendFile(t *testing.T, p, s string) {
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

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// runGolden runs every case of module m.
func runGolden(t *testing.T, m Module) {
	dirs, _ := filepath.Glob(filepath.Join("testdata/modgolden", m.Name, "*"))
	if len(dirs) == 0 {
		t.Fatalf("no golden cases for %s", m.Name)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := goldenCase(t, m, dir)
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

func TestModuleGolden(t *testing.T) {
	for _, m := range append([]Module{SetPasswords, Timezone, Locale, NTP, CACerts, Keyboard, SeedRandom, ResolvConf, Rsyslog}, cmModules...) {
		t.Run(m.Name, func(t *testing.T) { runGolden(t, m) })
	}
}
