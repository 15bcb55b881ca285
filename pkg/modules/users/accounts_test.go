package users

// The accounts golden cases (testdata/accounts): users_groups, ssh and
// set_passwords on a Debian target with its account files
// (modtest.AccountsRoot, famtest.Accounts).

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

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

// TestAccountsGolden runs users_groups, ssh and set_passwords, in their
// init-stage order (set_passwords applies ssh_pwauth), on each
// testdata/accounts/<case>: cloud-config.yaml, optional meta-data.yaml
// and root/ overlay; want.txt lists every changed path with type, mode,
// owner and content. Owners are compared only when running as root.
func TestAccountsGolden(t *testing.T) {
	mods := []modules.Module{UsersGroups, SSH, SetPasswords}
	useCachedHostKeys(t)
	cases, _ := filepath.Glob("testdata/accounts/*")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := modtest.AccountsRoot(t, filepath.Join(dir, "root"))
			c, warnings := famtest.Accounts(t, r, acctLoadYAML(t, filepath.Join(dir, "cloud-config.yaml")), acctLoadYAML(t, filepath.Join(dir, "meta-data.yaml")))
			before := acctSnapshot(t, r.Dir())
			var errs []error
			for _, m := range mods {
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
