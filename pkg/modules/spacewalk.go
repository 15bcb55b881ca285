package modules

// spacewalk, as cloud-init 26.x's cc_spacewalk: with `spacewalk.server`,
// rhn-setup is installed and, unless `rhn-profile-sync --verbose` says the
// machine is registered (exit 0; 1 means not), rhnreg_ks registers it
// under the datasource's fqdn with the optional proxy and activation key.

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// SpacewalkCACert is the CA certificate rhnreg_ks is given.
const SpacewalkCACert = "/usr/share/rhn/RHN-ORG-TRUSTED-SSL-CERT"

// Spacewalk is cc_spacewalk.
var Spacewalk = Module{
	Name:       "spacewalk",
	Frequency:  state.PerInstance,
	Keys:       []string{"spacewalk"},
	Distros:    []string{"rhel", "fedora", "openeuler"},
	ActivateBy: []string{"spacewalk"},
	Run:        Typed(runSpacewalk),
}

// spacewalkConfig is the module's configuration.
type spacewalkConfig struct {
	Present   bool `cfg:"spacewalk,present"`
	Spacewalk struct {
		Server        string `cfg:"server,scalar"`
		Proxy         string `cfg:"proxy,scalar"`
		ActivationKey string `cfg:"activation_key,scalar"`
	} `cfg:"spacewalk"`
}

func runSpacewalk(ctx context.Context, c *Context, cfg spacewalkConfig) error {
	if !cfg.Present {
		return nil
	}
	sc := cfg.Spacewalk
	if sc.Server == "" {
		c.Log.Debug("Skipping module named spacewalk, 'spacewalk/server' key was not found in configuration")
		return nil
	}
	if err := c.InstallPackages(ctx, c.Facts(), []string{"rhn-setup"}); err != nil {
		return err
	}
	err := c.RunCmd(ctx, DistroCmd("rhn-profile-sync", "--verbose"))
	var xe *target.ExitError
	switch {
	case err == nil:
		return nil // already registered
	case errors.As(err, &xe) && xe.Code == 1:
	default:
		return err
	}
	profile, _ := dsHostname(c, true)
	c.Log.Info(fmt.Sprintf("Registering using `rhnreg_ks` profile '%s' into server '%s'", profile, sc.Server))
	argv := []string{"rhnreg_ks", "--serverUrl", "https://" + sc.Server + "/XMLRPC", "--profilename", profile}
	if sc.Proxy != "" {
		argv = append(argv, "--proxy", sc.Proxy)
	}
	argv = append(argv, "--sslCACert", SpacewalkCACert)
	if sc.ActivationKey != "" {
		argv = append(argv, "--activationkey", sc.ActivationKey)
	}
	return c.RunCmd(ctx, DistroCmd(argv...))
}
