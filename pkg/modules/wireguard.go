package modules

// wireguard, as cloud-init 26.x's cc_wireguard: wireguard-tools (and, on a
// kernel older than 5.6, wireguard) installed when `wg` is missing, the
// wireguard kernel module loaded when lsmod lacks it, then for each of
// `wireguard.interfaces` (name, config_path, content: all strings) the
// config written 0600, wg-quick@NAME enabled and restarted; last the
// `wireguard.readinessprobe` shell commands run, their failures collected
// into the module's error.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Wireguard is cc_wireguard.
var Wireguard = Module{
	Name:       "wireguard",
	Frequency:  state.PerInstance,
	Keys:       []string{"wireguard"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"wireguard"},
	Run:        Typed(runWireguard),
}

// kernelVersion is the running kernel's (major, minor) from the target's
// /proc; (0, 0) when unknown.
func kernelVersion(c *Context) (int, int) {
	b, err := c.Root.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return 0, 0
	}
	f := strings.FieldsFunc(strings.TrimSpace(string(b)), func(r rune) bool { return r == '.' || r == '-' })
	if len(f) < 2 {
		return 0, 0
	}
	ma, _ := strconv.Atoi(f[0])
	mi, _ := strconv.Atoi(f[1])
	return ma, mi
}

// wireguardConfig is the module's configuration: whether wireguard is
// given and, when it is a mapping, its contents (another shape configures
// nothing).
type wireguardConfig struct {
	HasWireguard bool             `cfg:"wireguard,present"`
	Wireguard    wireguardSection `cfg:"wireguard,loose"`
}

// wireguardSection is the wireguard mapping: interfaces (a list; another
// shape is none) and readinessprobe (given or not; its items checked by
// the module with cloud-init's messages).
type wireguardSection struct {
	Interfaces []wgInterface `cfg:"interfaces,loose"`
	Probes     pyval.Opt     `cfg:"readinessprobe"`
	ProbeList  []any         `cfg:"readinessprobe,loose"`
}

// wgInterface is one interfaces item: its three keys as given (an item
// that is not a mapping has none), checked by wgValidate.
type wgInterface struct {
	Name, ConfigPath, Content pyval.Opt
}

// UnmarshalPy reads a mapping's name, config_path and content.
func (w *wgInterface) UnmarshalPy(d *pyval.Decoder, v any) error {
	switch m := v.(type) {
	case map[string]any:
		var f struct {
			Name       pyval.Opt `cfg:"name"`
			ConfigPath pyval.Opt `cfg:"config_path"`
			Content    pyval.Opt `cfg:"content"`
		}
		if err := d.Decode(m, &f); err != nil {
			return err
		}
		*w = wgInterface{Name: f.Name, ConfigPath: f.ConfigPath, Content: f.Content}
	}
	return nil
}

func runWireguard(ctx context.Context, c *Context, cfg wireguardConfig) error {
	if !cfg.HasWireguard {
		c.Log.Debug("Skipping module named wireguard, no 'wireguard' configuration found")
		return nil
	}
	wg := cfg.Wireguard
	if !c.Which("wg") {
		pkgs := []string{"wireguard-tools"}
		// Unknown (0.0) counts as new: WireGuard is in every kernel since 5.6.
		if ma, mi := kernelVersion(c); ma != 0 && (ma < 5 || ma == 5 && mi < 6) {
			pkgs = append(pkgs, "wireguard")
		}
		if err := c.InstallPackages(ctx, c.Facts(), pkgs); err != nil {
			c.Logexc("Failed to install wireguard-tools")
			return err
		}
	}
	r, err := c.RunCapture(ctx, ShellCmd("lsmod")...)
	if err == nil && !regexp.MustCompile("wireguard").MatchString(strings.TrimSpace(r.Stdout)) {
		c.Log.Debug("Loading wireguard kernel module")
		_, err = c.RunCapture(ctx, ShellCmd("modprobe wireguard")...)
	}
	if err != nil {
		c.Logexc("Could not load wireguard module:\n%v", err)
		return err
	}
	for _, iface := range wg.Interfaces {
		if err := wgValidate(iface); err != nil {
			return err
		}
		name, p, content := iface.Name.Value.(string), iface.ConfigPath.Value.(string), iface.Content.Value.(string)
		if err := c.Root.WriteFile(p, []byte(content), 0o600); err != nil {
			return fmt.Errorf("Failure writing Wireguard configuration file %s:\n%w", p, err)
		}
		f := c.Facts()
		for _, action := range []string{"enable", "restart"} {
			if err := c.ManageService(ctx, f, action, "wg-quick@"+name); err != nil {
				return fmt.Errorf("Failed enabling/starting Wireguard interface(s):\n%w", err)
			}
		}
	}
	if !wg.Probes.Given || wg.Probes.Value == nil {
		c.Log.Debug("Skipping readinessprobe - no checks defined")
		return nil
	}
	list := wg.ProbeList
	var bad []string
	for i, p := range list {
		if _, ok := p.(string); !ok {
			bad = append(bad, fmt.Sprintf("Expected a string for readinessprobe at %d. Found %s", i, pyval.Str(p)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("Invalid readinessProbe commands:\n%s", strings.Join(bad, "\n"))
	}
	var failed []string
	for _, p := range list {
		if _, err := c.RunCapture(ctx, ShellCmd(p.(string))...); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("Failed running readinessprobe command:\n%s", strings.Join(failed, "\n"))
	}
	return nil
}

// wgValidate is supplemental_schema_validation of one interface: the
// missing keys, then (in key order) the ones that are not strings.
func wgValidate(iface wgInterface) error {
	var errs, missing []string
	keys := []struct {
		name string
		v    pyval.Opt
	}{{"config_path", iface.ConfigPath}, {"content", iface.Content}, {"name", iface.Name}}
	for _, k := range keys {
		if !k.v.Given {
			missing = append(missing, k.name)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, "Missing required wg:interfaces keys: "+strings.Join(missing, ", "))
	}
	for _, k := range keys {
		if !k.v.Given {
			continue
		}
		if _, ok := k.v.Value.(string); !ok {
			errs = append(errs, fmt.Sprintf("Expected a string for wg:interfaces:%s. Found %s", k.name, pyval.Str(k.v.Value)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("Invalid wireguard interface configuration:\n%s", strings.Join(errs, "\n"))
	}
	return nil
}
