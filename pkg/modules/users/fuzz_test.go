package users

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// FuzzUsersModules runs users_groups, set_passwords and ssh_import_id on
// any cloud-config (seeds:
// the golden cases, the accounts cases and the docs examples) against a
// small temp-dir Debian target whose commands all succeed: none may panic or
// modify the config.
func FuzzUsersModules(f *testing.F) {
	for _, g := range []string{"testdata/modgolden/*/*/config.yaml", "testdata/accounts/*/cloud-config.yaml",
		"../testdata/docs/users_groups/example*.yaml", "../testdata/docs/set_passwords/example*.yaml", "../testdata/docs/ssh_import_id/example*.yaml"} {
		files, _ := filepath.Glob(g)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	f.Add([]byte("users: {a: {groups: {x: [1]}, sudo: [1], uid: {}}, default: 3}\nuser: [x]\ngroups: [[a], {b: {c: 1}}]"))
	f.Add([]byte("chpasswd: {users: [3, {name: [x]}, {name: a, type: null}], list: [':', 'a:R']}\nssh_import_id: {a: 1}\nssh_pwauth: [1]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _, err := yaml11.LoadMap("fuzz", b)
		if err != nil || cfg == nil {
			return
		}
		orig := pyval.DeepCopy(cfg)
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "etc/ssh"), 0o755)
		for p, s := range map[string]string{
			"etc/os-release":      "ID=debian\nVERSION_ID=12\n",
			"etc/passwd":          "root:x:0:0::/root:/bin/sh\ndebian:x:1000:1000::/home/debian:/bin/sh\n",
			"etc/shadow":          "root:*:19800:0:99999:7:::\ndebian:!:19800:0:99999:7:::\n",
			"etc/group":           "root:x:0:\nsudo:x:27:\ndebian:x:1000:\n",
			"etc/gshadow":         "root:*::\nsudo:*::\ndebian:!::\n",
			"etc/sudoers":         "#includedir /etc/sudoers.d\n",
			"etc/ssh/sshd_config": "UsePAM yes\n",
		} {
			os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
		}
		root, err := target.New(dir, target.WithRunner(modtest.NewRunner()), target.WithClock(modtest.Now))
		if err != nil {
			t.Fatal(err)
		}
		c := &modules.Context{Root: root, Config: modules.Config(cfg), Meta: map[string]any{}, InstanceID: "iid-fuzz",
			Distro: distro.Detect(root.ReadFile), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
			Console: io.Discard, Now: modtest.Now, Uptime: func() float64 { return 1 }, Warn: func(string) {}}
		for _, m := range []modules.Module{UsersGroups, SetPasswords, SSHImportID} {
			_ = m.Run(t.Context(), c)
		}
		if !cmp.Equal(orig, map[string]any(cfg)) {
			t.Fatal("config modified")
		}
	})
}

// FuzzDecodeConsoleKeys feeds any cloud-config to the decoders of
// keys_to_console and ssh_authkey_fingerprints: none may panic or modify
// the config.
func FuzzDecodeConsoleKeys(f *testing.F) {
	for _, g := range []string{"../testdata/docs/keys_to_console/example*.yaml", "../testdata/docs/ssh_authkey_fingerprints/example*.yaml"} {
		files, _ := filepath.Glob(g)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	f.Add([]byte("ssh: {emit_keys_to_console: [1]}\nssh_fp_console_blacklist: [1, null, '']\nssh_key_console_blacklist: x\nauthkey_hash: 3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _, err := yaml11.LoadMap("fuzz", b)
		if err != nil || cfg == nil {
			return
		}
		orig := pyval.DeepCopy(cfg)
		decodeKeysToConsole(modtest.Typed[keysToConsoleKeys](modules.Config(cfg)))
		decodeAuthkey(modtest.Typed[authkeyKeys](modules.Config(cfg)))
		if !cmp.Equal(orig, map[string]any(cfg)) {
			t.Fatal("config modified")
		}
	})
}
