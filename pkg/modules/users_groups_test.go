package modules

import (
	"bytes"
	"context"
	"crypto"
	"errors"
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
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// accountsRoot builds a target from testdata/base-debian plus an overlay,
// with Debian's modes and owners on the sensitive files.
func accountsRoot(t *testing.T, overlay string) *target.Root {
	t.Helper()
	dir := t.TempDir()
	for _, src := range []string{"testdata/base-debian", overlay} {
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
	r, err := target.New(dir, target.WithClock(func() time.Time { return accountsNow }))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// accountsContext is a module context on root with cfg and meta.
func accountsContext(t *testing.T, r *target.Root, cfg Config, meta map[string]any) (*Context, *[]string) {
	t.Helper()
	warnings := &[]string{}
	if meta == nil {
		meta = map[string]any{}
	}
	c := &Context{
		Root:       r,
		Config:     cfg,
		Meta:       meta,
		InstanceID: "iid-test",
		Distro:     distro.Detect(r.ReadFile),
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out:        io.Discard,
		Modules:    Core(),
		Now:        func() time.Time { return accountsNow },
		Uptime:     func() float64 { return 1 },
		Version:    "26.2-cloudroot",
		Warn:       func(m string) { *warnings = append(*warnings, m) },
	}
	return c, warnings
}

// cachedHostKeys makes host key generation cheap in tests: one real key per
// type per test binary.
var cachedHostKeys = struct {
	sync.Mutex
	m map[string]crypto.Signer
}{m: map[string]crypto.Signer{}}

func useCachedHostKeys(t *testing.T) {
	t.Helper()
	orig := generateHostKey
	generateHostKey = func(kind string) (crypto.Signer, error) {
		cachedHostKeys.Lock()
		defer cachedHostKeys.Unlock()
		if k, ok := cachedHostKeys.m[kind]; ok {
			return k, nil
		}
		k, err := orig(kind)
		if err == nil {
			cachedHostKeys.m[kind] = k
		}
		return k, err
	}
	t.Cleanup(func() { generateHostKey = orig })
}

func acctLoadYAML(t testing.TB, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	m, _, err := yaml11.LoadMap(p, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	randomHashRE = regexp.MustCompile(`\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}`)
	pubKeyRE     = regexp.MustCompile(`^((?:ssh-|ecdsa-)[-a-z0-9@.]+) [A-Za-z0-9+/=]{40,}( .*)?$`)
	ownerRE      = regexp.MustCompile(`(?m)^(== \S+ \S+ \S+) \d+:\d+$`)
)

// acctEntry describes every acctEntry of the tree under dir.
type acctEntry struct {
	kind    string
	mode    fs.FileMode
	uid     int
	gid     int
	content string
}

func acctSnapshot(t *testing.T, dir string) map[string]acctEntry {
	t.Helper()
	out := map[string]acctEntry{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := acctEntry{mode: fi.Mode()}
		e.uid, e.gid = target.FileOwner(fi)
		switch {
		case fi.IsDir():
			e.kind = "dir"
		case fi.Mode()&fs.ModeSymlink != 0:
			e.kind = "link"
			e.content, _ = os.Readlink(p)
		default:
			e.kind = "file"
			b, _ := os.ReadFile(p)
			e.content = string(b)
		}
		out["/"+filepath.ToSlash(strings.TrimPrefix(p, dir+"/"))] = e
		return nil
	})
	return out
}

// acctManifest lists what changed between before and after, with generated
// secrets redacted.
func acctManifest(before, after map[string]acctEntry, errs error, warnings []string) string {
	var paths []string
	for p := range after {
		if b, ok := before[p]; !ok || b != after[p] {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		e, ok := after[p]
		if !ok {
			fmt.Fprintf(&b, "== %s deleted\n", p)
			continue
		}
		fmt.Fprintf(&b, "== %s %s %v %d:%d\n", p, e.kind, e.mode, e.uid, e.gid)
		if e.kind == "dir" {
			continue
		}
		content := e.content
		switch {
		case strings.HasPrefix(content, "-----BEGIN OPENSSH PRIVATE KEY-----") && strings.Contains(p, "ssh_host_"):
			content = "<openssh private key>\n"
		case strings.HasPrefix(filepath.Base(p), "ssh_host_") && strings.HasSuffix(p, ".pub"):
			content = pubKeyRE.ReplaceAllString(strings.TrimSuffix(content, "\n"), "$1 <base64>$2") + "\n"
		}
		content = randomHashRE.ReplaceAllString(content, "$$6$$<salt>$$<hash>")
		b.WriteString(content)
		if !strings.HasSuffix(content, "\n") {
			b.WriteString("\\ no newline at end\n")
		}
	}
	b.WriteString("== errors\n")
	if errs != nil {
		for l := range strings.SplitSeq(errs.Error(), "\n") {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("== warnings\n")
	for _, w := range warnings {
		b.WriteString(w + "\n")
	}
	return b.String()
}

// TestAccountsGolden runs users_groups, ssh and set_passwords (their
// init-stage order; set_passwords applies ssh_pwauth) on
// each testdata/accounts/<case>: cloud-config.yaml, optional meta-data.yaml
// and root/ overlay; want.txt lists every changed path with type, mode,
// owner and content. Owners are compared only when running as root.
func TestAccountsGolden(t *testing.T) {
	useCachedHostKeys(t)
	cases, _ := filepath.Glob("testdata/accounts/*")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := accountsRoot(t, filepath.Join(dir, "root"))
			c, warnings := accountsContext(t, r, acctLoadYAML(t, filepath.Join(dir, "cloud-config.yaml")), acctLoadYAML(t, filepath.Join(dir, "meta-data.yaml")))
			before := acctSnapshot(t, r.Dir())
			var errs []error
			for _, m := range []Module{UsersGroups, SSH, SetPasswords} {
				if err := m.Run(context.Background(), c); err != nil {
					errs = append(errs, err)
				}
			}
			got := acctManifest(before, acctSnapshot(t, r.Dir()), errors.Join(errs...), *warnings)
			wantFile := filepath.Join(dir, "want.txt")
			if golden.Update() {
				if os.Geteuid() != 0 {
					t.Fatal("-update must run as root so that owners are recorded")
				}
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantB, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run with -update as root)", err)
			}
			want := string(wantB)
			if os.Geteuid() != 0 {
				want = ownerRE.ReplaceAllString(want, "$1 -")
				got = ownerRE.ReplaceAllString(got, "$1 -")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", wantFile, diff)
			}
		})
	}
}

func TestUsersGroupsSudoersFresh(t *testing.T) {
	r := accountsRoot(t, "")
	os.Remove(filepath.Join(r.Dir(), "etc/sudoers"))
	c, _ := accountsContext(t, r, Config{"users": []any{
		map[string]any{"name": "a", "sudo": "ALL=(ALL) NOPASSWD:ALL"},
		map[string]any{"name": "b", "sudo": []any{"ALL=(ALL) ALL"}},
	}}, nil)
	for range 2 { // the second run must not duplicate the blocks
		if err := UsersGroups.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	want := "# Created by cloud-init v. 26.2-cloudroot on Sun, 22 Nov 2026 08:36:48 +0000\n\n" +
		"# User rules for a\na ALL=(ALL) NOPASSWD:ALL\n\n# User rules for b\nb ALL=(ALL) ALL\n"
	b, err := r.ReadFile(CloudSudoersFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("sudoers (-want +got):\n%s", diff)
	}
	if fi, _ := r.Stat(CloudSudoersFile); fi.Mode().Perm() != 0o440 {
		t.Errorf("mode = %v", fi.Mode())
	}
	if r.Exists(SudoersFile) {
		t.Error("/etc/sudoers created")
	}
	if fi, _ := r.Stat(SudoersDir); fi.Mode().Perm() != 0o750 {
		t.Errorf("sudoers.d mode = %v", fi.Mode())
	}
}

func TestEnsureSudoDir(t *testing.T) {
	tests := []struct {
		name, sudoers string
		appended      bool
	}{
		{"hash includedir", "#includedir /etc/sudoers.d\n", false},
		{"at includedir", "@includedir /etc/sudoers.d/\n", false},
		{"other dir", "#includedir /etc/other\n", true},
		{"commented", "# includedir /etc/sudoers.d\n", true},
		{"none, no final newline", "root ALL=(ALL) ALL", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := accountsRoot(t, "")
			sp := filepath.Join(r.Dir(), "etc/sudoers")
			os.Remove(sp)
			if err := os.WriteFile(sp, []byte(tt.sudoers), 0o440); err != nil {
				t.Fatal(err)
			}
			os.Chmod(sp, 0o440)
			c, _ := accountsContext(t, r, nil, nil)
			if err := ensureSudoDir(c); err != nil {
				t.Fatal(err)
			}
			b, _ := r.ReadFile(SudoersFile)
			want := tt.sudoers
			if tt.appended {
				want += "\n# Added by cloud-init v. 26.2-cloudroot on Sun, 22 Nov 2026 08:36:48 +0000\n#includedir /etc/sudoers.d\n"
			}
			if diff := cmp.Diff(want, string(b)); diff != "" {
				t.Errorf("sudoers (-want +got):\n%s", diff)
			}
			if fi, _ := r.Stat(SudoersFile); fi.Mode().Perm() != 0o440 {
				t.Errorf("mode = %v", fi.Mode())
			}
		})
	}
}

func TestDoasRules(t *testing.T) {
	r := accountsRoot(t, "")
	c, _ := accountsContext(t, r, nil, nil)
	if err := writeDoasRules(c, "alpine", []string{"permit nopass alpine"}); err != nil {
		t.Fatal(err)
	}
	if err := writeDoasRules(c, "alpine", []string{"permit nopass bob"}); err == nil {
		t.Error("rule for another user accepted")
	}
	b, _ := r.ReadFile(DoasFile)
	want := "# Created by cloud-init v. 26.2-cloudroot on Sun, 22 Nov 2026 08:36:48 +0000\n\n# cloud-init User rules for alpine\npermit nopass alpine\n"
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("doas.conf (-want +got):\n%s", diff)
	}
}

func TestUsersGroupsPlainTextPassword(t *testing.T) {
	r := accountsRoot(t, "")
	c, _ := accountsContext(t, r, Config{"users": []any{
		map[string]any{"name": "p", "plain_text_passwd": "s3cret", "lock_passwd": false},
	}}, nil)
	var logs bytes.Buffer
	c.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := UsersGroups.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	s, err := r.LookupShadow("p")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := target.SHA512Crypt("s3cret", s.Hash); got != s.Hash {
		t.Errorf("hash %q does not verify", s.Hash)
	}
	if strings.Contains(logs.String(), "s3cret") || strings.Contains(logs.String(), s.Hash) {
		t.Error("password or hash logged")
	}
}
