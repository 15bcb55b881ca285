package modules

// TestUpstreamLocaleKeymap holds the locale and keyboard modules to what
// upstream cloud-init's distro classes do, as recorded by
// scripts/goldens/distro.sh in pkg/distro/testdata/upstream/<case>.json:
// apply_locale("de_DE.UTF-8") on an unconfigured image with locale-gen and
// update-locale installed, and set_keymap("de", "pc105", "nodeadkeys", "")
// on a booted system. The files each leaves and the commands each runs
// must be the same. (set_timezone's recording is replayed by
// pkg/modules/ntp's TestUpstreamSetTimezone, with the same helpers from
// internal/modtest.)

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

func TestUpstreamLocaleKeymap(t *testing.T) {
	for name, u := range modtest.UpstreamDistros(t) {
		for _, step := range []string{"apply_locale", "set_keymap"} {
			raw := map[string]json.RawMessage{"apply_locale": u.ApplyLocale, "set_keymap": u.SetKeymap}[step]
			var ops []modtest.UpstreamOp
			if json.Unmarshal(raw, &ops) != nil {
				continue // upstream failed here (a string error): nothing to compare
			}
			t.Run(name+"/"+step, func(t *testing.T) {
				tr, rr, root := modtest.UpstreamRoot(t, u)
				c := &Context{Root: tr, Config: Config{}, Distro: distro.Detect(tr.ReadFile),
					Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
					Now: func() time.Time { return accountsNow }, Version: "26.2-cloudroot", Warn: func(string) {}}
				var err error
				switch step {
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
				wantFiles, wantCmds := modtest.UpstreamEffects(ops, func(p string) string { return readFile(t, c, p) })
				gotFiles := map[string]string{}
				for p := range wantFiles {
					gotFiles[p] = modtest.EffectOf(root, p)
				}
				// Files upstream did not touch must be untouched here too.
				for _, p := range modtest.UpstreamTouched {
					if _, ok := wantFiles[p]; !ok {
						if e := modtest.EffectOf(root, p); e != "<removed>" {
							gotFiles[p] = e
						}
					}
				}
				if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
					t.Errorf("files (-upstream +cloudroot):\n%s", diff)
				}
				if diff := cmp.Diff(wantCmds, rr.Cmds); diff != "" {
					t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
				}
			})
		}
	}
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
				if got := modtest.EffectOf(g.Root, p); got != content {
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
				if got := modtest.EffectOf(g.Root, p); got != content {
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
