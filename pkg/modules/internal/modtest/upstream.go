package modtest

// The replay of upstream's distro-class recordings
// (scripts/goldens/distro.sh, pkg/distro/testdata/upstream/<case>.json),
// shared by the timezone test in pkg/modules/ntp and the locale and
// keyboard tests in pkg/modules.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// UpstreamOp is one recorded operation: a command (argv with its extra
// environment) or a file operation (write, delete, symlink, copy).
type UpstreamOp struct {
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	FileOp []string `json:"file_op"`
}

// UpstreamDistro is one distro's recording: what set_timezone,
// set_keymap and apply_locale did (a list of UpstreamOp, or a string when
// upstream failed).
type UpstreamDistro struct {
	OSID        string          `json:"os_id"`
	VersionID   string          `json:"version_id"`
	Init        string          `json:"init"`
	SetTimezone json.RawMessage `json:"set_timezone"`
	SetKeymap   json.RawMessage `json:"set_keymap"`
	ApplyLocale json.RawMessage `json:"apply_locale"`
}

// UpstreamDistros reads every recording, by case name.
func UpstreamDistros(t *testing.T) map[string]UpstreamDistro {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(Shared(), "..", "..", "distro", "testdata", "upstream", "*.json"))
	if len(files) == 0 {
		t.Fatal("no upstream goldens")
	}
	out := map[string]UpstreamDistro{}
	for _, fn := range files {
		var u UpstreamDistro
		b, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(fn), ".json")] = u
	}
	return out
}

// UpstreamEffects turns recorded operations into the files they leave
// (path → content, "symlink -> X" or "<removed>") and the commands.
func UpstreamEffects(ops []UpstreamOp, read func(string) string) (map[string]string, []string) {
	files := map[string]string{}
	var cmds []string
	for _, o := range ops {
		switch {
		case o.Argv != nil:
			env := slices.Clone(o.Env)
			sort.Strings(env)
			cmds = append(cmds, strings.TrimSpace(strings.Join(env, " ")+" "+strings.Join(o.Argv, " ")))
		case len(o.FileOp) > 0:
			switch o.FileOp[0] {
			case "write":
				files[o.FileOp[1]] = o.FileOp[2]
			case "delete":
				files[o.FileOp[1]] = "<removed>"
			case "symlink":
				files[o.FileOp[2]] = "symlink -> " + o.FileOp[1]
			case "copy":
				files[o.FileOp[2]] = read(o.FileOp[1])
			}
		}
	}
	return files, cmds
}

// SortedEnvRunner records each command as its sorted extra environment
// and argv, as UpstreamEffects writes them.
type SortedEnvRunner struct{ Cmds []string }

// Run records cmd.
func (r *SortedEnvRunner) Run(_ context.Context, _ string, cmd target.Cmd) error {
	env := slices.Clone(cmd.Env[3:])
	sort.Strings(env)
	r.Cmds = append(r.Cmds, strings.TrimSpace(strings.Join(env, " ")+" "+strings.Join(cmd.Argv, " ")))
	return nil
}

// EffectOf is what p is now under root: content (without cloud-init's
// dated header), a symlink's target, or "<removed>".
func EffectOf(root, p string) string {
	hp := filepath.Join(root, p)
	if fi, err := os.Lstat(hp); err != nil {
		return "<removed>"
	} else if fi.Mode()&os.ModeSymlink != 0 {
		l, _ := os.Readlink(hp)
		return "symlink -> " + l
	}
	b, _ := os.ReadFile(hp)
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "# Created by cloud-init") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// UpstreamTouched are the files the distro steps may write: one a step
// upstream left alone must be absent here too.
var UpstreamTouched = []string{"/etc/default/keyboard", "/etc/timezone", "/etc/locale.gen", "/etc/default/locale", "/etc/locale.conf",
	"/etc/sysconfig/clock", "/etc/sysconfig/i18n", "/etc/sysconfig/language", "/etc/profile.d/50-cloud-init-locale.sh"}

// UpstreamRoot builds the image scripts/goldens/lib/distro.py pretends to
// have, with a SortedEnvRunner; it returns the target, the runner and
// the root directory.
func UpstreamRoot(t *testing.T, u UpstreamDistro) (*target.Root, *SortedEnvRunner, string) {
	t.Helper()
	root := t.TempDir()
	w := func(p, s string, mode os.FileMode) {
		hp := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	w("/etc/os-release", fmt.Sprintf("ID=%s\nVERSION_ID=%q\n", u.OSID, u.VersionID), 0o644)
	w("/usr/share/zoneinfo/Europe/Berlin", "TZif2 fake Europe/Berlin\n", 0o644)
	w("/usr/share/zoneinfo/UTC", "TZif2 fake UTC\n", 0o644)
	if err := os.Symlink("/usr/share/zoneinfo/UTC", filepath.Join(root, "etc/localtime")); err != nil {
		t.Fatal(err)
	}
	w("/usr/sbin/locale-gen", "", 0o755)
	w("/usr/share/bkeymaps/de/nodeadkeys.bmap.gz", "", 0o644)
	w("/usr/sbin/update-locale", "", 0o755)
	switch u.Init {
	case distro.InitSystemd:
		w("/lib/systemd/systemd", "", 0o755)
	case distro.InitOpenRC:
		w("/sbin/openrc", "", 0o755)
	case distro.InitSysVinit:
		w("/etc/inittab", "", 0o644)
	}
	rr := &SortedEnvRunner{}
	tr, err := target.New(root, target.WithRunner(rr))
	if err != nil {
		t.Fatal(err)
	}
	return tr, rr, root
}
