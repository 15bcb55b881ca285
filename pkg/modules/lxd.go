package modules

// lxd, as cloud-init 26.x's cc_lxd: with a non-empty `lxd` mapping, once
// snap seeding is done, the lxd snap is installed unless `snap list lxd`
// finds it, storage tools for the chosen backends (zfsutils-linux, lvm2,
// btrfs-progs) are installed when missing, and after `lxd waitready`
// either `lxd init --preseed` reads `lxd.preseed` (which excludes `init`
// and `bridge`), or `lxd init --auto` runs with the `init` options (an lvm
// backend failing is retried without thinpool) and `bridge` is set up:
// through debconf on images with /etc/default/lxd-bridge, else with `lxc
// network create/attach-profile`, removing what `lxd init` made first.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// DefaultLXDBridge is lxd.bridge.name's default.
const DefaultLXDBridge = "lxdbr0"

// LXD is cc_lxd.
var LXD = Module{
	Name:       "lxd",
	Frequency:  state.PerInstance,
	Keys:       []string{"lxd"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"lxd"},
	Run:        Typed(runLXD),
}

// lxdInitKeys are the lxd.init options, in the order given to lxd init.
var lxdInitKeys = []string{"network_address", "network_port", "storage_backend", "storage_create_device",
	"storage_create_loop", "storage_pool", "trust_password"}

// lxdConfig is the module's configuration: lxd as given, its shape
// checked by the module with the module's own message.
type lxdConfig struct {
	LXD any `cfg:"lxd"`
}

func runLXD(ctx context.Context, c *Context, cfg lxdConfig) error {
	raw := cfg.LXD
	if !pyval.Truthy(raw) {
		c.Log.Debug("Skipping module named lxd, not present or disabled by cfg")
		return nil
	}
	lxd, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("lxd config must be a dictionary. found a '%s'", pyval.TypeName(raw))
	}
	if err := waitSnapSeeded(ctx, c); err != nil {
		return err
	}
	get := func(k string, def any) any {
		if v, ok := lxd[k]; ok {
			return v
		}
		return def
	}
	initRaw, bridgeRaw, preseedRaw := get("init", map[string]any{}), get("bridge", map[string]any{}), get("preseed", "")
	var errs []string
	initCfg, ok := initRaw.(map[string]any)
	if !ok {
		errs = append(errs, fmt.Sprintf("lxd.init config must be a dictionary. found a '%s'", pyval.TypeName(initRaw)))
	}
	bridge, ok := bridgeRaw.(map[string]any)
	if !ok {
		errs = append(errs, fmt.Sprintf("lxd.bridge config must be a dictionary. found a '%s'", pyval.TypeName(bridgeRaw)))
	}
	preseed, ok := preseedRaw.(string)
	if !ok {
		errs = append(errs, fmt.Sprintf("lxd.preseed config must be a string. found a '%s'", pyval.TypeName(preseedRaw)))
	}
	if preseed != "" && (len(initCfg) > 0 || len(bridge) > 0) {
		var inc []string
		if len(initCfg) > 0 {
			inc = append(inc, "lxd.init")
		}
		if len(bridge) > 0 {
			inc = append(inc, "lxd.bridge")
		}
		errs = append(errs, "Unable to configure LXD. lxd.preseed config can not be provided with key(s): "+strings.Join(inc, ", "))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, ". "))
	}
	if _, err := c.RunCapture(ctx, "snap", "list", "lxd"); err != nil {
		if _, err := c.RunCapture(ctx, "snap", "install", "lxd"); err != nil {
			return fmt.Errorf("Failed to install lxd from snap: %w", err)
		}
	}
	if pkgs := lxdPackages(c, initCfg, preseed); len(pkgs) > 0 {
		if err := c.InstallPackages(ctx, c.Facts(), pkgs); err != nil {
			c.Warnf("failed to install packages %s: %v", pyval.Repr(pkgs), err)
			return nil
		}
	}
	if _, err := c.RunCapture(ctx, "lxd", "waitready", "--timeout=300"); err != nil {
		return err
	}
	if preseed != "" {
		return c.RunCmdInput(ctx, []string{"lxd", "init", "--preseed"}, []byte(preseed))
	}
	if len(initCfg) > 0 {
		if err := lxdInit(ctx, c, initCfg); err != nil {
			return err
		}
	}
	if len(bridge) == 0 {
		return nil
	}
	return lxdBridge(ctx, c, bridge, len(initCfg) > 0)
}

func lxdInit(ctx context.Context, c *Context, initCfg map[string]any) error {
	argv := []string{"lxd", "init", "--auto"}
	for _, k := range lxdInitKeys {
		if v := initCfg[k]; pyval.Truthy(v) {
			argv = append(argv, fmt.Sprintf("--%s=%s", strings.ReplaceAll(k, "_", "-"), pyval.Str(v)))
		}
	}
	_, err := c.RunCapture(ctx, argv...)
	if err == nil {
		return nil
	}
	if scalarString(initCfg["storage_backend"]) != "lvm" {
		return err
	}
	c.Log.Info("Cloud-init doesn't use thinpool by default on Ubuntu due to LP #1982780. This behavior will change in the future.")
	if _, err := c.RunCapture(ctx, "lxc", "storage", "create", "default", "lvm", "lvm.use_thinpool=false"); err != nil {
		return err
	}
	var again []string
	for _, a := range argv {
		if !strings.HasPrefix(a, "--storage-backend") {
			again = append(again, a)
		}
	}
	_, err = c.RunCapture(ctx, again...)
	return err
}

// lxdPackages are the storage tools the backends need and the target lacks.
func lxdPackages(c *Context, initCfg map[string]any, preseed string) []string {
	var drivers []string
	if v, ok := initCfg["storage_backend"]; ok {
		drivers = append(drivers, scalarString(v))
	}
	if preseed != "" && strings.Contains(preseed, "storage_pools") {
		var pre map[string]any
		if _, err := yaml11.Unmarshal("lxd.preseed", []byte(preseed), &pre); err != nil {
			c.Warnf("lxd.preseed string value is not YAML.  Unable to determine required storage driver packages to support storage_pools config.")
		}
		pools, _ := pre["storage_pools"].([]any)
		for _, p := range pools {
			if m, ok := p.(map[string]any); ok && pyval.Truthy(m["driver"]) {
				drivers = append(drivers, scalarString(m["driver"]))
			}
		}
	}
	has := func(d string) bool {
		for _, x := range drivers {
			if x == d {
				return true
			}
		}
		return false
	}
	var pkgs []string
	if has("zfs") && !c.Which("zfs") {
		pkgs = append(pkgs, "zfsutils-linux")
	}
	if has("lvm") && !c.Which("lvcreate") {
		pkgs = append(pkgs, "lvm2")
	}
	if has("btrfs") && !c.Which("mkfs.btrfs") {
		pkgs = append(pkgs, "btrfs-progs")
	}
	return pkgs
}

func lxdBridge(ctx context.Context, c *Context, bridge map[string]any, didInit bool) error {
	bget := func(k string) string {
		v, ok := bridge[k]
		if !ok {
			return ""
		}
		return pyval.Str(v)
	}
	name := DefaultLXDBridge
	if _, ok := bridge["name"]; ok {
		name = bget("name")
	}
	if c.Root.Exists("/etc/default/lxd-bridge") && c.Which("debconf-communicate") {
		keys, vals, err := lxdBridgeDebconf(bridge, bget)
		if err != nil {
			return err
		}
		var b strings.Builder
		for i, k := range keys {
			fmt.Fprintf(&b, "set %s %s\n", k, vals[i])
		}
		if err := c.RunCmdInput(ctx, []string{"debconf-communicate"}, []byte(b.String())); err != nil {
			c.Logexc("Failed to run 'debconf-communicate' for lxd with")
		}
		if err := c.Root.Remove("/etc/default/lxd-bridge"); err != nil {
			return fmt.Errorf("lxd: %w", err)
		}
		_, err = c.RunCapture(ctx, "dpkg-reconfigure", "lxd", "--frontend=noninteractive")
		return err
	}
	create, attach, err := lxdBridgeCmds(bridge, bget, name)
	if err != nil {
		return err
	}
	if err := lxdCleanupDefault(ctx, c, name, didInit, create != nil, attach != nil); err != nil {
		return err
	}
	if create != nil {
		if err := lxc(ctx, c, create...); err != nil {
			return err
		}
	}
	if attach != nil {
		return lxc(ctx, c, attach...)
	}
	return nil
}

// lxdBridgeDebconf is bridge_to_debconf, as ordered keys and values.
func lxdBridgeDebconf(bridge map[string]any, bget func(string) string) ([]string, []string, error) {
	var keys, vals []string
	set := func(k, v string) { keys, vals = append(keys, k), append(vals, v) }
	or := func(k, def string) string {
		if _, ok := bridge[k]; ok {
			return bget(k)
		}
		return def
	}
	switch bget("mode") {
	case "none":
		set("lxd/setup-bridge", "false")
		set("lxd/bridge-name", "")
	case "existing":
		set("lxd/setup-bridge", "false")
		set("lxd/use-existing-bridge", "true")
		set("lxd/bridge-name", or("name", "None"))
	case "new":
		set("lxd/setup-bridge", "true")
		if pyval.Truthy(bridge["name"]) {
			set("lxd/bridge-name", bget("name"))
		}
		if pyval.Truthy(bridge["ipv4_address"]) {
			set("lxd/bridge-ipv4", "true")
			set("lxd/bridge-ipv4-address", bget("ipv4_address"))
			set("lxd/bridge-ipv4-netmask", or("ipv4_netmask", "None"))
			set("lxd/bridge-ipv4-dhcp-first", or("ipv4_dhcp_first", "None"))
			set("lxd/bridge-ipv4-dhcp-last", or("ipv4_dhcp_last", "None"))
			set("lxd/bridge-ipv4-dhcp-leases", or("ipv4_dhcp_leases", "None"))
			set("lxd/bridge-ipv4-nat", or("ipv4_nat", "true"))
		}
		if pyval.Truthy(bridge["ipv6_address"]) {
			set("lxd/bridge-ipv6", "true")
			set("lxd/bridge-ipv6-address", bget("ipv6_address"))
			set("lxd/bridge-ipv6-netmask", or("ipv6_netmask", "None"))
			set("lxd/bridge-ipv6-nat", or("ipv6_nat", "false"))
		}
		if pyval.Truthy(bridge["domain"]) {
			set("lxd/bridge-domain", bget("domain"))
		}
	default:
		return nil, nil, fmt.Errorf("invalid bridge mode \"%s\"", or("mode", "None"))
	}
	return keys, vals, nil
}

// lxdBridgeCmds is bridge_to_cmd: the lxc arguments creating the bridge
// and attaching it to the default profile (nil: none).
func lxdBridgeCmds(bridge map[string]any, bget func(string) string, name string) (create, attach []string, err error) {
	mode := bget("mode")
	if mode == "none" {
		return nil, nil, nil
	}
	attach = []string{"network", "attach-profile", name, "default", "eth0"}
	if mode == "existing" {
		return nil, attach, nil
	}
	if mode != "new" {
		if _, ok := bridge["mode"]; !ok {
			mode = "None"
		}
		return nil, nil, fmt.Errorf("invalid bridge mode \"%s\"", mode)
	}
	truthy := func(k string) bool { return pyval.Truthy(bridge[k]) }
	create = []string{"network", "create", name}
	if truthy("ipv4_address") && truthy("ipv4_netmask") {
		create = append(create, fmt.Sprintf("ipv4.address=%s/%s", bget("ipv4_address"), bget("ipv4_netmask")))
		if v, ok := bridge["ipv4_nat"]; !ok || v == "true" {
			create = append(create, "ipv4.nat=true")
		}
		if truthy("ipv4_dhcp_first") && truthy("ipv4_dhcp_last") {
			create = append(create, fmt.Sprintf("ipv4.dhcp.ranges=%s-%s", bget("ipv4_dhcp_first"), bget("ipv4_dhcp_last")))
		}
	} else {
		create = append(create, "ipv4.address=none")
	}
	if truthy("ipv6_address") && truthy("ipv6_netmask") {
		create = append(create, fmt.Sprintf("ipv6.address=%s/%s", bget("ipv6_address"), bget("ipv6_netmask")))
		if bridge["ipv6_nat"] == "true" {
			create = append(create, "ipv6.nat=true")
		}
	} else {
		create = append(create, "ipv6.address=none")
	}
	if truthy("domain") {
		create = append(create, "dns.domain="+bget("domain"))
	}
	if v, ok := bridge["mtu"]; ok && v != -1 {
		create = append(create, "bridge.mtu="+pyval.Str(v))
	}
	return create, attach, nil
}

// lxc runs `lxc ARGS --force-local` as cloud-init's _lxc does.
func lxc(ctx context.Context, c *Context, args ...string) error {
	argv := append(append([]string{"lxc"}, args...), "--force-local")
	return c.RunCmd(ctx, distro.Cmd{Argv: argv, Env: []string{"HOME=/root", "LC_ALL=C", "USER=root"}})
}

// lxdCleanupDefault is maybe_cleanup_default: what `lxd init --auto` made
// for lxdbr0 is removed before cloud-init makes its own (exit code 1 of a
// removal means it was not there).
func lxdCleanupDefault(ctx context.Context, c *Context, name string, didInit, create, attach bool) error {
	if name != DefaultLXDBridge || !didInit {
		return nil
	}
	notThere := func(err error) bool {
		var xe *target.ExitError
		return errors.As(err, &xe) && xe.Code == 1
	}
	if create {
		err := lxc(ctx, c, "network", "detach-profile", name, "default")
		switch {
		case err == nil:
			if err := lxc(ctx, c, "network", "delete", name); err != nil {
				return err
			}
		case !notThere(err):
			return err
		}
	}
	if attach {
		if err := lxc(ctx, c, "profile", "device", "remove", "default", "eth0"); err != nil && !notThere(err) {
			return err
		}
	}
	return nil
}
