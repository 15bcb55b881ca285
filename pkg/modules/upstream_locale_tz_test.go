package modules

// TestUpstreamTimezoneLocale holds the timezone, locale and keyboard modules to what
// upstream cloud-init's distro classes do, as recorded by
// scripts/goldens/distro.sh in pkg/distro/testdata/upstream/<case>.json:
// set_timezone("Europe/Berlin") on an image whose /etc/localtime is a
// link, apply_locale("de_DE.UTF-8") on an unconfigured image with
// locale-gen and update-locale installed, and set_keymap("de", "pc105",
// "nodeadkeys", "") on a booted system. The files each leaves and the
// commands each runs must be the same.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
)

type upstreamOp struct {
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	FileOp []string `json:"file_op"`
}

type upstreamDistro struct {
	OSID        string          `json:"os_id"`
	VersionID   string          `json:"version_id"`
	Init        string          `json:"init"`
	SetTimezone json.RawMessage `json:"set_timezone"`
	SetKeymap   json.RawMessage `json:"set_keymap"`
	ApplyLocale json.RawMessage `json:"apply_locale"`
}

// upstreamEffects turns recorded operations into the files they leave
// (path → content, "symlink -> X" or "<removed>") and the commands.
func upstreamEffects(ops []upstreamOp, read func(string) string) (map[string]string, []string) {
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

type sortedEnvRunner struct{ cmds []string }

func (r *sortedEnvRunner) Run(_ context.Context, _ string, cmd target.Cmd) error {
	env := slices.Clone(cmd.Env[3:])
	sort.Strings(env)
	r.cmds = append(r.cmds, strings.TrimSpace(strings.Join(env, " ")+" "+strings.Join(cmd.Argv, " ")))
	return nil
}

func TestUpstreamTimezoneLocale(t *testing.T) {
	files, _ := filepath.Glob("../distro/testdata/upstream/*.json")
	if len(files) == 0 {
		t.Fatal("no upstream goldens")
	}
	for _, fn := range files {
		var u upstreamDistro
		b, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(fn), ".json")
		for _, step := range []string{"set_timezone", "apply_locale", "set_keymap"} {
			raw := map[string]json.RawMessage{"set_timezone": u.SetTimezone, "apply_locale": u.ApplyLocale, "set_keymap": u.SetKeymap}[step]
			var ops []upstreamOp
			if json.Unmarshal(raw, &ops) != nil {
				continue // upstream failed here (a string error): nothing to compare
			}
			t.Run(name+"/"+step, func(t *testing.T) {
				c, rr, root := upstreamRoot(t, u)
				var err error
				switch step {
				case "set_timezone":
					err = setTimezone(c, "Europe/Berlin")
				case "set_keymap":
					c.Booted = true
					c.Config = Config{"keyboard": map[string]any{"layout": "de", "model": "pc105", "variant": "nodeadkeys", "options": ""}}
					err = Keyboard.Run(t.Context(), c)
				default:
					c.Config = Config{"locale": "de_DE.UTF-8"}
					err = Locale.Run(t.Context(), c)
				}
				if err != nil {
					t.Fatal(err)
				}
				wantFiles, wantCmds := upstreamEffects(ops, func(p string) string { return readFile(t, c, p) })
				gotFiles := map[string]string{}
				for p := range wantFiles {
					gotFiles[p] = effectOf(root, p)
				}
				// Files upstream did not touch must be untouched here too.
				for _, p := range []string{"/etc/default/keyboard", "/etc/timezone", "/etc/locale.gen", "/etc/default/locale", "/etc/locale.conf",
					"/etc/sysconfig/clock", "/etc/sysconfig/i18n", "/etc/sysconfig/language", "/etc/profile.d/50-cloud-init-locale.sh"} {
					if _, ok := wantFiles[p]; !ok {
						if e := effectOf(root, p); e != "<removed>" {
							gotFiles[p] = e
						}
					}
				}
				if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
					t.Errorf("files (-upstream +cloudroot):\n%s", diff)
				}
				if diff := cmp.Diff(wantCmds, rr.cmds); diff != "" {
					t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
				}
			})
		}
	}
}

// effectOf is what p is now: content (without cloud-init's dated header),
// a symlink's target, or "<removed>".
func effectOf(root, p string) string {
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

// upstreamRoot builds the image scripts/goldens/lib/distro.py pretends to have.
func upstreamRoot(t *testing.T, u upstreamDistro) (*Context, *sortedEnvRunner, string) {
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
	rr := &sortedEnvRunner{}
	tr, err := target.New(root, target.WithRunner(rr))
	if err != nil {
		t.Fatal(err)
	}
	c := &Context{Root: tr, Config: Config{}, Distro: distro.Detect(tr.ReadFile),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
		Now: func() time.Time { return accountsNow }, Version: "26.2-cloudroot", Warn: func(string) {}}
	return c, rr, root
}

// upstreamLocale is one case of testdata/locale-upstream.json
// (scripts/goldens/cc-locale.py: upstream's cc_locale.handle with each case's
// distro class, on the same golden cases).
type upstreamLocale struct {
	Files     map[string]string `json:"files"`
	Commands  []string          `json:"commands"`
	Installed []string          `json:"installed"`
	Error     string            `json:"error"`
}

// sortEnv sorts a logged command's leading KEY=value words.
func sortEnv(l string) string {
	f := strings.Fields(l)
	i := 0
	for i < len(f) && strings.Contains(f[i], "=") {
		i++
	}
	slices.Sort(f[:i])
	return strings.Join(f, " ")
}

// TestLocaleUpstream runs locale on every golden case and requires
// upstream's files (its dated header aside), commands and packages (each
// installed once: upstream's recorder installs nothing, so it asks twice).
func TestLocaleUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/locale-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamLocale
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/locale", name))
			if runErr := Locale.Run(t.Context(), g.c); (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			for p, content := range want.Files {
				if got := effectOf(g.Root, p); got != content {
					t.Errorf("%s (-upstream +cloudroot):\n%s", p, cmp.Diff(content, got))
				}
			}
			var cmds []string
			var installed []string
			for _, l := range g.Runner.Log {
				f := strings.Fields(l)
				switch {
				case slices.Contains(f, "install"):
					installed = append(installed, f[len(f)-1])
				case slices.Contains(f, "update") && strings.Contains(l, "apt-get"):
				default:
					cmds = append(cmds, sortEnv(l))
				}
			}
			var wantCmds []string
			for _, c := range want.Commands {
				wantCmds = append(wantCmds, sortEnv(c))
			}
			if diff := cmp.Diff(wantCmds, cmds, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
			}
			if diff := cmp.Diff(slices.Compact(want.Installed), installed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("installed (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

// TestTimezoneUpstream runs timezone on every golden case and requires the
// files upstream's cc_timezone.handle leaves (scripts/goldens/timezone.py:
// its recorded writes, links, copies and deletes, replayed here) and its
// failures.
func TestTimezoneUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/timezone-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]struct {
		Ops   [][]string `json:"ops"`
		Error string     `json:"error"`
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/timezone", name))
			if runErr := Timezone.Run(t.Context(), g.c); (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			var ops []upstreamOp
			for _, o := range want.Ops {
				ops = append(ops, upstreamOp{FileOp: o})
			}
			wantFiles, _ := upstreamEffects(ops, func(p string) string { return effectOf(g.Root, p) })
			for p, content := range wantFiles {
				if got := effectOf(g.Root, p); got != content {
					t.Errorf("%s = %q, upstream %q", p, got, content)
				}
			}
		})
	}
}

// TestKeyboardUpstream runs keyboard on every golden case and requires what
// upstream's cc_keyboard.handle did (scripts/goldens/keyboard.py): the
// files, the commands and service restarts (cloudroot restarts nothing in
// the initramfs) and failures.
func TestKeyboardUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/keyboard-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]struct {
		Files    map[string]string `json:"files"`
		Commands [][]string        `json:"commands"`
		Error    string            `json:"error"`
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/keyboard", name))
			if runErr := Keyboard.Run(t.Context(), g.c); (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			for p, content := range want.Files {
				if got := effectOf(g.Root, p); got != content {
					t.Errorf("%s (-upstream +cloudroot):\n%s", p, cmp.Diff(content, got))
				}
			}
			var cmds []string
			for _, c := range want.Commands {
				if c[0] == "service" {
					if !g.c.Booted {
						continue
					}
					cmd, err := g.c.Facts().Services().Command(c[1], c[2], c[3:]...)
					if err != nil {
						t.Fatal(err)
					}
					c = cmd.Argv
				}
				cmds = append(cmds, strings.Join(c, " "))
			}
			if diff := cmp.Diff(cmds, g.Runner.Log, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}
