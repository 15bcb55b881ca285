//go:build unix

package users

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// confineContext is a Context on a target with alice's account and
// modtest.Shadow as /etc/shadow (0640), its warnings recorded.
func confineContext(t *testing.T) (*modules.Context, *[]string) {
	t.Helper()
	files := maps.Clone(confineFiles)
	files["etc/shadow"] = modtest.Shadow
	c, _, _ := famtest.NewContext(t, nil, files, nil)
	if err := os.Chmod(filepath.Join(c.Root.Dir(), "etc", "shadow"), 0o640); err != nil {
		t.Fatal(err)
	}
	warnings := &[]string{}
	c.Warn = func(m string) { *warnings = append(*warnings, m) }
	return c, warnings
}

var confineFiles = map[string]string{
	"etc/passwd":     "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n",
	"etc/group":      "root:x:0:\nadm:x:4:\nalice:x:1000:\n",
	"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n",
}

// TestAuthorizedKeysSymlinkRefused: an existing user's authorized_keys (or
// .ssh) planted as a symlink to a root file is refused with a warning, the
// module goes on, and nothing outside the home is touched (issue 25 item 2).
func TestAuthorizedKeysSymlinkRefused(t *testing.T) {
	for _, tc := range []struct{ name, link, to string }{
		{"authorized_keys to /etc/shadow", ".ssh/authorized_keys", "/etc/shadow"},
		{"authorized_keys to a relative /etc/shadow", ".ssh/authorized_keys", "../../../etc/shadow"},
		{".ssh to /etc", ".ssh", "/etc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, warnings := confineContext(t)
			home := modtest.UserHome(t, c.Root.Dir())
			if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
				t.Fatal(err)
			}
			lp := filepath.Join(home, tc.link)
			os.Remove(lp)
			if err := os.Symlink(tc.to, lp); err != nil {
				t.Fatal(err)
			}
			u, err := c.Root.LookupUser("alice")
			if err != nil {
				t.Fatal(err)
			}
			if err := setupUserKeys(c, u, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB alice@laptop"}, nil); err != nil {
				t.Errorf("err = %v, want a warning only", err)
			}
			modtest.ShadowUnchanged(t, c.Root.Dir())
			if c.Root.Exists("/etc/authorized_keys") {
				t.Error("/etc/authorized_keys written")
			}
			if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "symlink") || !strings.Contains((*warnings)[0], "alice") {
				t.Errorf("warnings = %q, want one about alice's symlink", *warnings)
			}
		})
	}
}

// TestAuthorizedKeysInUserHome: the ordinary case still works in a home the
// user owns, keys owned by the user.
func TestAuthorizedKeysInUserHome(t *testing.T) {
	c, warnings := confineContext(t)
	home := modtest.UserHome(t, c.Root.Dir())
	u, err := c.Root.LookupUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := setupUserKeys(c, u, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB alice@laptop"}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ".ssh", "authorized_keys"))
	if err != nil || !strings.Contains(string(b), "alice@laptop") {
		t.Fatalf("authorized_keys = %q, %v", b, err)
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{".ssh", ".ssh/authorized_keys"} {
			fi, _ := os.Lstat(filepath.Join(home, p))
			if uid, gid := target.FileOwner(fi); uid != 1000 || gid != 1000 {
				t.Errorf("%s owner %d:%d", p, uid, gid)
			}
		}
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings: %q", *warnings)
	}
}
