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
	"sort"
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

// wireguardConfig is the module's configuration: wireguard as given, its shape
// checked by the module with the module's own message.
type wireguardConfig struct {
	HasWireguard bool `cfg:"wireguard,present"`
	Wireguard    any  `cfg:"wireguard"`
}

func runWireguard(ctx context.Context, c *Context, cfg wireguardConfig) error {
	raw, ok := cfg.Wireguard, cfg.HasWireguard
	if !ok {
		c.Log.Debug("Skipping module named wireguard, no 'wireguard' configuration found")
		return nil
	}
	wg, _ := raw.(map[string]any)
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
	ifaces, _ := wg["interfaces"].([]any)
	for _, it := range ifaces {
		iface, _ := it.(map[string]any)
		if err := wgValidate(iface); err != nil {
			return err
		}
		name, p, content := iface["name"].(string), iface["config_path"].(string), iface["content"].(string)
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
	probes, ok := wg["readinessprobe"]
	if !ok || probes == nil {
		c.Log.Debug("Skipping readinessprobe - no checks defined")
		return nil
	}
	list, _ := probes.([]any)
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

// wgValidate is supplemental_schema_validation of one interface.
func wgValidate(iface map[string]any) error {
	var errs, missing []string
	for _, k := range []string{"config_path", "content", "name"} {
		if _, ok := iface[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, "Missing required wg:interfaces keys: "+strings.Join(missing, ", "))
	}
	keys := make([]string, 0, len(iface))
	for k := range iface {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "name" && k != "config_path" && k != "content" {
			continue
		}
		if _, ok := iface[k].(string); !ok {
			errs = append(errs, fmt.Sprintf("Expected a string for wg:interfaces:%s. Found %s", k, pyval.Str(iface[k])))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("Invalid wireguard interface configuration:\n%s", strings.Join(errs, "\n"))
	}
	return nil
}
