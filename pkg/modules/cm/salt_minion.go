package cm

// salt_minion (cloud-init cc_salt_minion, final stage, per-instance, all
// distros, activated by the `salt_minion` key), as cloud-init 26.x does it:
//
//  1. pkg_name (default salt-minion; py-salt on FreeBSD) is installed with
//     the distro's package manager;
//  2. config_dir (/etc/salt; /usr/local/etc/salt on FreeBSD) is created;
//     conf is written to config_dir/minion and grains to config_dir/grains
//     as safeyaml.dumps writes YAML;
//  3. with both public_key and private_key, they go to pki_dir (default
//     config_dir/pki/minion when that directory exists, else
//     config_dir/pki; created 0700) as minion.pub and minion.pem;
//  4. the service (service_name, default salt-minion; salt_minion on
//     FreeBSD) is enabled and restarted — unless conf.file_client is
//     "local" (masterless): then it is disabled and stopped and
//     `salt-call --local state.apply` applies the states.
//
// Deliberate difference: minion.pem is written 0600 (cloud-init leaves it
// 0644 inside the 0700 directory).

import (
	"context"
	"fmt"
	"path"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// SaltMinion is cc_salt_minion.
var SaltMinion = modules.Module{
	Name:       "salt_minion",
	Frequency:  state.PerInstance,
	Keys:       []string{"salt_minion"},
	ActivateBy: []string{"salt_minion"},
	Run:        modules.Typed(runSaltMinion),
}

// saltConfig is the `salt_minion` key with the distro's defaults applied.
type saltConfig struct {
	Package, Service, ConfDir string
	Conf, Grains              any
	HasConf, HasGrains        bool
	PublicKey, PrivateKey     string
	HasKeys                   bool
	PKIDir                    string
	// Local is conf.file_client == "local" (masterless).
	Local bool
}

// saltSection is the salt_minion mapping, each key as given.
type saltSection struct {
	PkgName     pyval.Opt `cfg:"pkg_name"`
	ConfigDir   pyval.Opt `cfg:"config_dir"`
	ServiceName pyval.Opt `cfg:"service_name"`
	// Conf and Grains are passed through: written to the minion's
	// configuration and grains files as YAML.
	Conf       pyval.Opt `cfg:"conf"`
	Grains     pyval.Opt `cfg:"grains"`
	PublicKey  pyval.Opt `cfg:"public_key"`
	PrivateKey pyval.Opt `cfg:"private_key"`
	PKIDir     pyval.Opt `cfg:"pki_dir"`
	// FileClient is conf.file_client (nil when conf is not a mapping).
	ConfKeys struct {
		FileClient any `cfg:"file_client"`
	} `cfg:"conf,loose"`
}

func decodeSalt(c *modules.Context, m saltSection) saltConfig {
	s := saltConfig{Package: "salt-minion", Service: "salt-minion", ConfDir: "/etc/salt"}
	if c.Distro.Variant() == "freebsd" {
		s = saltConfig{Package: "py-salt", Service: "salt_minion", ConfDir: "/usr/local/etc/salt"}
	}
	s.Package = m.PkgName.Or(s.Package)
	s.ConfDir = m.ConfigDir.Or(s.ConfDir)
	s.Service = m.ServiceName.Or(s.Service)
	s.Conf, s.HasConf = m.Conf.Value, m.Conf.Given
	s.Grains, s.HasGrains = m.Grains.Value, m.Grains.Given
	if m.PublicKey.Given && m.PrivateKey.Given {
		s.HasKeys = true
		s.PublicKey, s.PrivateKey = m.PublicKey.Str(), m.PrivateKey.Str()
		s.PKIDir = path.Join(s.ConfDir, "pki/minion")
		if fi, err := c.Root.Stat(s.PKIDir); err != nil || !fi.IsDir() {
			s.PKIDir = path.Join(s.ConfDir, "pki")
		}
		if m.PKIDir.Given {
			s.PKIDir = m.PKIDir.Str()
		}
	}
	s.Local = m.ConfKeys.FileClient == "local"
	return s
}

// saltKeys is the module's key: the salt_minion mapping (null is an
// empty one).
type saltKeys struct {
	Present bool        `cfg:"salt_minion,present"`
	Salt    saltSection `cfg:"salt_minion"`
}

// TypeErrors words a salt_minion value that is not a mapping.
func (saltKeys) TypeErrors() map[string]string {
	return map[string]string{"salt_minion": "salt_minion: expected a mapping, found %s"}
}

func runSaltMinion(ctx context.Context, c *modules.Context, cfg saltKeys) error {
	if !cfg.Present {
		return nil
	}
	s := decodeSalt(c, cfg.Salt)
	f := c.Facts()
	if err := c.InstallPackages(ctx, f, []string{s.Package}); err != nil {
		return err
	}
	if err := c.Root.MkdirAll(s.ConfDir, 0o755); err != nil {
		return fmt.Errorf("salt_minion: %w", err)
	}
	if s.HasConf {
		if err := c.Root.WriteFile(path.Join(s.ConfDir, "minion"), []byte(yaml11.SafeDumps(s.Conf)), 0o644); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
	}
	if s.HasGrains {
		if err := c.Root.WriteFile(path.Join(s.ConfDir, "grains"), []byte(yaml11.SafeDumps(s.Grains)), 0o644); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
	}
	if s.HasKeys {
		if err := c.Root.MkdirAll(s.PKIDir, 0o700); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
		if err := c.Root.WriteFile(path.Join(s.PKIDir, "minion.pub"), []byte(s.PublicKey), 0o644); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
		if err := c.Root.WriteFile(path.Join(s.PKIDir, "minion.pem"), []byte(s.PrivateKey), 0o600); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
	}
	enable, restart := distro.ActionEnable, distro.ActionRestart
	if s.Local {
		enable, restart = distro.ActionDisable, distro.ActionStop
	}
	if err := c.ManageService(ctx, f, enable, s.Service); err != nil {
		return err
	}
	if err := c.ManageService(ctx, f, restart, s.Service); err != nil {
		return err
	}
	if s.Local {
		_, err := cmCmd{Argv: []string{"salt-call", "--local", "state.apply"}}.run(ctx, c)
		return err
	}
	return nil
}
