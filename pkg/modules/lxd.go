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

// lxdInitOpts are the lxd.init options, in the order given to lxd init.
type lxdInitOpts struct {
	NetworkAddress      pyval.Opt `cfg:"network_address"`
	NetworkPort         pyval.Opt `cfg:"network_port"`
	StorageBackend      pyval.Opt `cfg:"storage_backend"`
	StorageCreateDevice pyval.Opt `cfg:"storage_create_device"`
	StorageCreateLoop   pyval.Opt `cfg:"storage_create_loop"`
	StoragePool         pyval.Opt `cfg:"storage_pool"`
	TrustPassword       pyval.Opt `cfg:"trust_password"`
	// All is the whole mapping: only its size is read (any key, known
	// or not, makes `lxd init --auto` run).
	All map[string]any `cfg:",all"`
}

// flags are the options with their lxd init flag names, in order.
func (o lxdInitOpts) flags() []struct {
	name string
	v    pyval.Opt
} {
	return []struct {
		name string
		v    pyval.Opt
	}{{"network-address", o.NetworkAddress}, {"network-port", o.NetworkPort}, {"storage-backend", o.StorageBackend},
		{"storage-create-device", o.StorageCreateDevice}, {"storage-create-loop", o.StorageCreateLoop},
		{"storage-pool", o.StoragePool}, {"trust-password", o.TrustPassword}}
}

// lxdBridgeOpts is lxd.bridge: each key with whether it is given, as
// bridge_to_debconf and bridge_to_cmd test for it.
type lxdBridgeOpts struct {
	Name           pyval.Opt `cfg:"name"`
	Mode           pyval.Opt `cfg:"mode"`
	IPv4Address    pyval.Opt `cfg:"ipv4_address"`
	IPv4Netmask    pyval.Opt `cfg:"ipv4_netmask"`
	IPv4DHCPFirst  pyval.Opt `cfg:"ipv4_dhcp_first"`
	IPv4DHCPLast   pyval.Opt `cfg:"ipv4_dhcp_last"`
	IPv4DHCPLeases pyval.Opt `cfg:"ipv4_dhcp_leases"`
	IPv4NAT        pyval.Opt `cfg:"ipv4_nat"`
	IPv6Address    pyval.Opt `cfg:"ipv6_address"`
	IPv6Netmask    pyval.Opt `cfg:"ipv6_netmask"`
	IPv6NAT        pyval.Opt `cfg:"ipv6_nat"`
	Domain         pyval.Opt `cfg:"domain"`
	MTU            pyval.Opt `cfg:"mtu"`
	// All is the whole mapping: only its size is read.
	All map[string]any `cfg:",all"`
}

// lxdSection is the lxd mapping. Init, Bridge and Preseed are the keys as
// given, their shapes checked by the module with its own messages (after
// snap seeding, as cloud-init does); InitOpts and BridgeOpts their
// contents when they are mappings.
type lxdSection struct {
	Init       pyval.Opt     `cfg:"init"`
	InitOpts   lxdInitOpts   `cfg:"init,loose"`
	Bridge     pyval.Opt     `cfg:"bridge"`
	BridgeOpts lxdBridgeOpts `cfg:"bridge,loose"`
	Preseed    pyval.Opt     `cfg:"preseed"`
}

// lxdConfig is the module's configuration: lxd as given (its truth and
// shape checked by the module with the module's own message) and, when
// it is a mapping, its contents.
type lxdConfig struct {
	LXD     pyval.Opt  `cfg:"lxd"`
	Section lxdSection `cfg:"lxd,loose"`
}

func runLXD(ctx context.Context, c *Context, cfg lxdConfig) error {
	if !cfg.LXD.Truthy() {
		c.Log.Debug("Skipping module named lxd, not present or disabled by cfg")
		return nil
	}
	if !isMapping(cfg.LXD.Value) {
		return fmt.Errorf("lxd config must be a dictionary. found a '%s'", pyval.TypeName(cfg.LXD.Value))
	}
	if err := waitSnapSeeded(ctx, c); err != nil {
		return err
	}
	lxd := cfg.Section
	var errs []string
	if lxd.Init.Given && !isMapping(lxd.Init.Value) {
		errs = append(errs, fmt.Sprintf("lxd.init config must be a dictionary. found a '%s'", pyval.TypeName(lxd.Init.Value)))
	}
	if lxd.Bridge.Given && !isMapping(lxd.Bridge.Value) {
		errs = append(errs, fmt.Sprintf("lxd.bridge config must be a dictionary. found a '%s'", pyval.TypeName(lxd.Bridge.Value)))
	}
	preseed := ""
	if lxd.Preseed.Given {
		s, ok := lxd.Preseed.Value.(string)
		if !ok {
			errs = append(errs, fmt.Sprintf("lxd.preseed config must be a string. found a '%s'", pyval.TypeName(lxd.Preseed.Value)))
		}
		preseed = s
	}
	initCfg, bridge := lxd.InitOpts, lxd.BridgeOpts
	if preseed != "" && (len(initCfg.All) > 0 || len(bridge.All) > 0) {
		var inc []string
		if len(initCfg.All) > 0 {
			inc = append(inc, "lxd.init")
		}
		if len(bridge.All) > 0 {
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
	if len(initCfg.All) > 0 {
		if err := lxdInit(ctx, c, initCfg); err != nil {
			return err
		}
	}
	if len(bridge.All) == 0 {
		return nil
	}
	return lxdBridge(ctx, c, bridge, len(initCfg.All) > 0)
}

func lxdInit(ctx context.Context, c *Context, initCfg lxdInitOpts) error {
	argv := []string{"lxd", "init", "--auto"}
	for _, f := range initCfg.flags() {
		if f.v.Truthy() {
			argv = append(argv, fmt.Sprintf("--%s=%s", f.name, pyval.Str(f.v.Value)))
		}
	}
	_, err := c.RunCapture(ctx, argv...)
	if err == nil {
		return nil
	}
	if scalarString(initCfg.StorageBackend.Value) != "lvm" {
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

// lxdPreseedPools is the part of an lxd.preseed document the module reads
// (storage_pools; a value of another shape is ignored).
type lxdPreseedPools struct {
	Pools []lxdPreseedPool `cfg:"storage_pools,loose"`
}

// lxdPreseedPool is one storage_pools item: a mapping's driver; an item
// of another shape names none.
type lxdPreseedPool struct{ Driver pyval.Opt }

// UnmarshalPy reads a mapping's driver.
func (p *lxdPreseedPool) UnmarshalPy(d *pyval.Decoder, v any) error {
	switch m := v.(type) {
	case map[string]any:
		var f struct {
			Driver pyval.Opt `cfg:"driver"`
		}
		if err := d.Decode(m, &f); err != nil {
			return err
		}
		p.Driver = f.Driver
	}
	return nil
}

// lxdPackages are the storage tools the backends need and the target lacks.
func lxdPackages(c *Context, initCfg lxdInitOpts, preseed string) []string {
	var drivers []string
	if initCfg.StorageBackend.Given {
		drivers = append(drivers, scalarString(initCfg.StorageBackend.Value))
	}
	if preseed != "" && strings.Contains(preseed, "storage_pools") {
		var pre map[string]any
		if _, err := yaml11.Unmarshal("lxd.preseed", []byte(preseed), &pre); err != nil {
			c.Warnf("lxd.preseed string value is not YAML.  Unable to determine required storage driver packages to support storage_pools config.")
		}
		var pools lxdPreseedPools
		_ = (&pyval.Decoder{}).Decode(pre, &pools)
		for _, p := range pools.Pools {
			if p.Driver.Truthy() {
				drivers = append(drivers, scalarString(p.Driver.Value))
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

func lxdBridge(ctx context.Context, c *Context, bridge lxdBridgeOpts, didInit bool) error {
	name := bridge.Name.Or(DefaultLXDBridge)
	if c.Root.Exists("/etc/default/lxd-bridge") && c.Which("debconf-communicate") {
		keys, vals, err := lxdBridgeDebconf(bridge)
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
	create, attach, err := lxdBridgeCmds(bridge, name)
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
func lxdBridgeDebconf(bridge lxdBridgeOpts) ([]string, []string, error) {
	var keys, vals []string
	set := func(k, v string) { keys, vals = append(keys, k), append(vals, v) }
	switch bridge.Mode.Str() {
	case "none":
		set("lxd/setup-bridge", "false")
		set("lxd/bridge-name", "")
	case "existing":
		set("lxd/setup-bridge", "false")
		set("lxd/use-existing-bridge", "true")
		set("lxd/bridge-name", bridge.Name.Or("None"))
	case "new":
		set("lxd/setup-bridge", "true")
		if bridge.Name.Truthy() {
			set("lxd/bridge-name", bridge.Name.Str())
		}
		if bridge.IPv4Address.Truthy() {
			set("lxd/bridge-ipv4", "true")
			set("lxd/bridge-ipv4-address", bridge.IPv4Address.Str())
			set("lxd/bridge-ipv4-netmask", bridge.IPv4Netmask.Or("None"))
			set("lxd/bridge-ipv4-dhcp-first", bridge.IPv4DHCPFirst.Or("None"))
			set("lxd/bridge-ipv4-dhcp-last", bridge.IPv4DHCPLast.Or("None"))
			set("lxd/bridge-ipv4-dhcp-leases", bridge.IPv4DHCPLeases.Or("None"))
			set("lxd/bridge-ipv4-nat", bridge.IPv4NAT.Or("true"))
		}
		if bridge.IPv6Address.Truthy() {
			set("lxd/bridge-ipv6", "true")
			set("lxd/bridge-ipv6-address", bridge.IPv6Address.Str())
			set("lxd/bridge-ipv6-netmask", bridge.IPv6Netmask.Or("None"))
			set("lxd/bridge-ipv6-nat", bridge.IPv6NAT.Or("false"))
		}
		if bridge.Domain.Truthy() {
			set("lxd/bridge-domain", bridge.Domain.Str())
		}
	default:
		return nil, nil, fmt.Errorf("invalid bridge mode \"%s\"", bridge.Mode.Or("None"))
	}
	return keys, vals, nil
}

// lxdBridgeCmds is bridge_to_cmd: the lxc arguments creating the bridge
// and attaching it to the default profile (nil: none).
func lxdBridgeCmds(bridge lxdBridgeOpts, name string) (create, attach []string, err error) {
	mode := bridge.Mode.Str()
	if mode == "none" {
		return nil, nil, nil
	}
	attach = []string{"network", "attach-profile", name, "default", "eth0"}
	if mode == "existing" {
		return nil, attach, nil
	}
	if mode != "new" {
		if !bridge.Mode.Given {
			mode = "None"
		}
		return nil, nil, fmt.Errorf("invalid bridge mode \"%s\"", mode)
	}
	create = []string{"network", "create", name}
	if bridge.IPv4Address.Truthy() && bridge.IPv4Netmask.Truthy() {
		create = append(create, fmt.Sprintf("ipv4.address=%s/%s", bridge.IPv4Address.Str(), bridge.IPv4Netmask.Str()))
		if !bridge.IPv4NAT.Given || bridge.IPv4NAT.Value == "true" {
			create = append(create, "ipv4.nat=true")
		}
		if bridge.IPv4DHCPFirst.Truthy() && bridge.IPv4DHCPLast.Truthy() {
			create = append(create, fmt.Sprintf("ipv4.dhcp.ranges=%s-%s", bridge.IPv4DHCPFirst.Str(), bridge.IPv4DHCPLast.Str()))
		}
	} else {
		create = append(create, "ipv4.address=none")
	}
	if bridge.IPv6Address.Truthy() && bridge.IPv6Netmask.Truthy() {
		create = append(create, fmt.Sprintf("ipv6.address=%s/%s", bridge.IPv6Address.Str(), bridge.IPv6Netmask.Str()))
		if bridge.IPv6NAT.Value == "true" {
			create = append(create, "ipv6.nat=true")
		}
	} else {
		create = append(create, "ipv6.address=none")
	}
	if bridge.Domain.Truthy() {
		create = append(create, "dns.domain="+bridge.Domain.Str())
	}
	if bridge.MTU.Given && bridge.MTU.Value != -1 {
		create = append(create, "bridge.mtu="+pyval.Str(bridge.MTU.Value))
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
