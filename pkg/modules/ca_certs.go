package modules

// ca_certs (cloud-init cc_ca_certs, init stage, per-instance, its distro
// list) manages trusted CA certificates with the distro's trust store
// (pkg/distro Facts.CACerts):
//
//  1. ca_certs (or the deprecated ca-certs, ignored when both are given)
//     must be a mapping; remove_defaults (or the deprecated
//     remove-defaults) deletes the default store (RHEL, Photon, Amazon),
//     or deselects every entry of /etc/ca-certificates.conf with "!"
//     under a marker comment (Debian, Ubuntu, Alpine; Debian and Ubuntu
//     also tell debconf not to trust new certificates);
//  2. each of `trusted` is written, 0644, as cloud-init-ca-cert-<n>.crt
//     (.pem, or under anchors/, per distro);
//  3. the distro's update command runs (update-ca-certificates,
//     update-ca-trust...).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// CACerts is cc_ca_certs.
var CACerts = Module{
	Name:       "ca_certs",
	Frequency:  state.PerInstance,
	Keys:       []string{"ca_certs", "ca-certs"},
	Distros:    distro.CACertsDistros,
	ActivateBy: []string{"ca_certs", "ca-certs"},
	Run:        Typed(runCACerts),
}

// caCertsConfig is the module's configuration (ca-certs is the spelling
// deprecated in 22.1).
type caCertsConfig struct {
	Present bool            `cfg:"ca_certs,present,old=ca-certs@22.1"`
	CACerts *caCertsSection `cfg:"ca_certs,old=ca-certs@22.1"`
}

// TypeErrors words a ca_certs that is not a mapping as cloud-init does.
func (caCertsConfig) TypeErrors() map[string]string {
	return map[string]string{"ca_certs": "unexpected type: %s"}
}

// caCertsSection is the ca_certs mapping. remove-defaults is read as
// cloud-init reads it: a fallback for remove_defaults, deprecated (22.1)
// whenever given, with no warning when both are.
type caCertsSection struct {
	HasOldRemove   bool     `cfg:"remove-defaults,present"`
	OldRemove      any      `cfg:"remove-defaults"`
	HasRemove      bool     `cfg:"remove_defaults,present"`
	RemoveDefaults any      `cfg:"remove_defaults"`
	Trusted        []string `cfg:"trusted,scalar"`
}

// caConfigHeader marks /etc/ca-certificates.conf as edited.
const caConfigHeader = "# Modified by cloud-init to deselect certs due to user-data"

func runCACerts(ctx context.Context, c *Context, cfg caCertsConfig) error {
	if !cfg.Present {
		c.Log.Debug("Skipping module named ca_certs, no 'ca_certs' key in configuration", "module", "ca_certs")
		return nil
	}
	if cfg.CACerts == nil {
		return fmt.Errorf("unexpected type: %s", pyval.TypeName(nil))
	}
	cc := cfg.CACerts
	if cc.HasOldRemove {
		c.Deprecate("Key 'remove-defaults'", "22.1", "Use 'remove_defaults' instead.")
	}
	rd := cc.RemoveDefaults
	if !cc.HasRemove {
		rd = cc.OldRemove
	}
	f := c.Facts()
	store := f.CACerts()
	if pyval.IsTrue(rd) {
		c.Log.Debug("Disabling/removing default certificates", "module", "ca_certs")
		switch store.RemoveDefaults {
		case "delete":
			for _, d := range []string{store.Path, store.LocalPath} {
				if err := emptyDir(c, d); err != nil {
					return fmt.Errorf("ca_certs: %w", err)
				}
			}
		case "deselect", "deselect+debconf":
			if err := deselectCACerts(c, store.Config); err != nil {
				return fmt.Errorf("ca_certs: %w", err)
			}
			if store.RemoveDefaults == "deselect+debconf" {
				sel := "ca-certificates ca-certificates/trust_new_crts select no"
				if err := c.RunCmdInput(ctx, []string{"debconf-set-selections", "-"}, []byte(sel)); err != nil {
					return fmt.Errorf("ca_certs: %w", err)
				}
			}
		}
	}
	for i, cert := range cc.Trusted {
		name := strings.ReplaceAll(path.Join(store.LocalPath, store.Filename), "{cert_index}", strconv.Itoa(i+1))
		if err := c.Root.WriteFile(name, []byte(cert), 0o644); err != nil {
			return fmt.Errorf("ca_certs: %w", err)
		}
	}
	c.Log.Debug("Updating certificates", "module", "ca_certs")
	return c.RunCmd(ctx, distro.Cmd{Argv: store.UpdateCmd})
}

// deselectCACerts is disable_system_ca_certs: every certificate line of
// fn gets a "!" prefix, after one marker comment.
func deselectCACerts(c *Context, fn string) error {
	if fn == "" {
		return nil
	}
	b, err := c.Root.ReadFile(fn)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(b) == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	var out []string
	added := false
	for _, l := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n") {
		switch {
		case l == caConfigHeader:
			added = true
			out = append(out, l)
		case l == "" || l[0] == '#' || l[0] == '!':
			out = append(out, l)
		default:
			if !added {
				out = append(out, caConfigHeader)
				added = true
			}
			out = append(out, "!"+l)
		}
	}
	fi, err := c.Root.Stat(fn)
	if err != nil {
		return err
	}
	return c.Root.WriteFileOpts(fn, []byte(strings.Join(out, "\n")+"\n"), SameOwner(fi, false))
}

// emptyDir is util.delete_dir_contents: everything under dir goes, dir
// stays.
func emptyDir(c *Context, dir string) error {
	if dir == "" {
		return nil
	}
	ents, err := c.Root.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := c.Root.RemoveAll(path.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
