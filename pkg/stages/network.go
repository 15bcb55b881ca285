package stages

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// UpgradedNetwork, when present in the target, stops cloud-init (and
// cloudroot) from writing network configuration.
const UpgradedNetwork = state.CloudDir + "/data/upgraded-network"

// staleNetworkGlobs are configuration files a previous instance's
// cloud-init/cloudroot left behind (cloud-init clean --configs network),
// plus MAC-bound persistent names that would misname a new instance's NICs.
var staleNetworkGlobs = []string{
	netconfig.NetplanPath,
	"/etc/systemd/network/10-cloud-init-*",
	"/etc/network/interfaces.d/50-cloud-init*",
	"/etc/NetworkManager/system-connections/cloud-init-*.nmconnection",
	netconfig.UdevRulesPath,
}

// NetworkResult says what the network step did.
type NetworkResult struct {
	Source   string // cmdline, system_cfg, ds, fallback, upgraded-network, disabled-by-*
	Renderer string
	Files    []string
	Warnings []string
	// Rejected are the values of the network config refused as unsafe to
	// write, each naming the source and key; the stage reports them as
	// warnings (status.json's recoverable errors, as cloud-init's logged
	// warnings are).
	Rejected []string
	// IfupdownPre is the ifupdown-pre drop-in's plan (nil: none written);
	// RenameNICs applies its renames.
	IfupdownPre *IfupdownPre
}

// networkInput picks the network configuration the way cloud-init's
// _find_networking_config does: the kernel command line, the initramfs
// (klibc state files, from initramfs: nil when not applicable), the system
// config's `network:` key, the datasource, then the fallback; the first
// that is present wins, and one that says `config: disabled` stops it all.
func networkInput(cmdline string, initramfs func() []byte, system map[string]any, ds map[string]any) ([]byte, string, bool, error) {
	cl := bootenv.ParseCmdline(cmdline)
	if v, ok := cl.Get("network-config"); ok {
		if v == "disabled" {
			return nil, "cmdline", true, nil
		}
		b, err := decodeCmdlineNetwork(v)
		if err != nil {
			return nil, "cmdline", false, fmt.Errorf("network-config= on the kernel command line: %w", err)
		}
		return b, "cmdline", isDisabledDoc(b), nil
	}
	if initramfs != nil {
		if b := initramfs(); b != nil {
			return b, "initramfs", false, nil
		}
	}
	for _, c := range []struct {
		name string
		v    map[string]any
	}{{"system_cfg", mapOrNil(system["network"])}, {"ds", ds}} {
		if len(c.v) == 0 {
			continue
		}
		if s, _ := c.v["config"].(string); s == "disabled" {
			return nil, c.name, true, nil
		}
		b, err := yaml.Marshal(c.v)
		if err != nil {
			return nil, c.name, false, err
		}
		return b, c.name, false, nil
	}
	return nil, "fallback", false, nil
}

func mapOrNil(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func isDisabledDoc(b []byte) bool {
	m, _, err := yaml11.LoadMap("network-config", b)
	if err != nil {
		return false
	}
	if n, ok := m["network"].(map[string]any); ok {
		m = n
	}
	s, _ := m["config"].(string)
	return s == "disabled"
}

// decodeCmdlineNetwork decodes network-config=<base64, optionally gzipped>.
func decodeCmdlineNetwork(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "=")); err != nil {
			return nil, fmt.Errorf("not base64: %w", err)
		}
	}
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(io.LimitReader(zr, 1<<20))
	}
	return b, nil
}

// DSNetwork is what the datasource says about applying its network
// configuration (datasource.Data's NetworkUpdateEvents and
// NetworkConfigSources).
type DSNetwork struct {
	UpdateEvents []string
	Sources      []string
}

// BeforeInitramfs reports whether the datasource's own configuration
// comes before the initramfs's in its source order.
func (n DSNetwork) BeforeInitramfs() bool {
	for _, s := range n.Sources {
		switch s {
		case "ds":
			return true
		case "initramfs":
			return false
		}
	}
	return false
}

// ApplyNetwork renders the target's network configuration from the chosen
// source with the renderer cloud-init would pick for the target's distro,
// after removing a previous instance's stale files on a new instance. run
// is the root holding /run (klibc ipconfig state files, the INITRAMFS
// source); nil skips that source.
func ApplyNetwork(t, run *target.Root, dist distro.Info, cmdline string, system, merged map[string]any, ds map[string]any, links []bootenv.NetLink, newInstance bool, dsNet DSNetwork, iid string) (*NetworkResult, error) {
	res := &NetworkResult{}
	if t.Exists(UpgradedNetwork) {
		res.Source = "upgraded-network"
		return res, nil
	}
	if !newInstance && !networkEveryBoot(merged, dsNet.UpdateEvents) {
		res.Source = "unchanged (not a new instance)"
		return res, nil
	}
	if newInstance {
		for _, g := range staleNetworkGlobs {
			ms, _ := t.Glob(g)
			for _, m := range ms {
				if err := t.Remove(m); err == nil {
					res.Warnings = append(res.Warnings, "removed stale network configuration "+m)
				}
			}
		}
	}
	macs := netconfig.MACs{}
	var nl []netconfig.Link
	// Interfaces are known by the names the target's udev will give them
	// (systemd's net_id), not the initramfs's kernel names.
	policy := bootenv.NamingPolicy(t.Exists, t.ReadFile, bootenv.ParseCmdline(cmdline))
	for _, l := range links {
		name := l.Name
		if n := l.Names.Pick(policy); n != "" && l.Name != "lo" {
			name = n
			res.Warnings = append(res.Warnings, fmt.Sprintf("interface %s is %s in the booted system (udev NamePolicy %s)", l.Name, n, strings.Join(policy, " ")))
		}
		if l.MAC != "" && l.Name != "lo" {
			macs[l.MAC] = name
		}
		nl = append(nl, netconfig.Link{Name: name, MAC: l.MAC, Driver: l.Driver, Carrier: l.Carrier,
			Dormant: l.Dormant, OperState: l.OperState, Bridge: l.Bridge, Bond: l.Bond, Member: l.Member, Virtual: l.Virtual,
			IPv6: l.IPv6})
	}
	var configured []string
	if si, ok := merged["system_info"].(map[string]any); ok {
		if n, ok := si["network"].(map[string]any); ok {
			if rs, ok := n["renderers"].([]any); ok {
				for _, r := range rs {
					configured = append(configured, fmt.Sprint(r))
				}
			}
		}
	}
	has := func(p string) bool {
		if strings.ContainsAny(p, "*?[") {
			ms, _ := t.Glob(p)
			return len(ms) > 0
		}
		return t.Exists(p)
	}
	renderer := netconfig.Select(dist.ID, dist.IDLike, has, configured)

	// Datasources hand platform network data over unconverted; the ones
	// cloudroot can convert become the datasource's config, the others fall
	// back (cloud-init's converters for them are not ported yet).
	var convert func() (*netconfig.Config, error)
	if ds != nil && ds["version"] == nil && ds["network"] == nil && ds["config"] == nil {
		convert = datasourceConverter(ds, merged, renderer, nl, macs)
		if convert == nil {
			res.Warnings = append(res.Warnings, "the datasource's network data has no converter yet; using the fallback configuration")
		}
		ds = nil
	}
	var initramfs func() []byte
	// A source whose network_config_sources put its own description
	// before the initramfs's (Oracle) wins over klibc's state when it has
	// one; the system configuration still comes first.
	dsFirst := dsNet.BeforeInitramfs() && (len(ds) > 0 || convert != nil)
	if run != nil && !dsFirst {
		initramfs = func() []byte {
			b, warnings := klibcNetwork(run, cmdline, links)
			res.Warnings = append(res.Warnings, warnings...)
			return b
		}
	}
	doc, src, disabled, err := networkInput(cmdline, initramfs, system, ds)
	if convert != nil && src == "fallback" {
		src = "ds"
	}
	res.Source = src
	if err != nil {
		return res, err
	}
	if disabled {
		res.Source = "disabled-by-" + src
		return res, nil
	}
	var cfg *netconfig.Config
	if doc == nil && convert != nil {
		cfg, err = convert()
		if errors.Is(err, netconfig.ErrNoConfig) {
			res.Warnings = append(res.Warnings, "the datasource's network data configures nothing here ("+err.Error()+"); using the fallback configuration")
			res.Source, cfg = "fallback", nil
		} else if err != nil {
			return res, fmt.Errorf("network data from the datasource: %w", err)
		} else {
			res.Warnings = append(res.Warnings, cfg.Warnings...)
		}
	}
	switch {
	case cfg != nil:
	case doc == nil:
		cfg = netconfig.Fallback(nl)
		if cfg == nil {
			res.Warnings = append(res.Warnings, "no network configuration and no NIC for the fallback configuration")
			return res, nil
		}
	default:
		cfg, err = netconfig.Parse(doc, macs)
		if err != nil {
			return res, fmt.Errorf("network config from %s: %w", src, err)
		}
	}
	for _, r := range cfg.Rejected {
		res.Rejected = append(res.Rejected, "network config from "+res.Source+": "+r)
	}
	if cfg.Disabled {
		res.Source = "disabled-by-" + src
		return res, nil
	}
	res.Renderer = renderer
	if res.Renderer == "" {
		return res, fmt.Errorf("no network renderer available in the target (looked for netplan, ifupdown, systemd-networkd, NetworkManager, network-scripts)")
	}
	out, err := netconfig.Render(res.Renderer, cfg)
	if err != nil {
		return res, fmt.Errorf("render %s: %w", res.Renderer, err)
	}
	res.Warnings = append(res.Warnings, out.Warnings...)
	for _, p := range out.Paths() {
		f := out.Files[p]
		if f.IfMissing && t.Exists(p) {
			continue
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := t.WriteFile(p, f.Data, mode); err != nil {
			return res, err
		}
		res.Files = append(res.Files, p)
	}
	if res.Renderer == netconfig.RendererENI {
		if p, err := ifupdownPreWait(t, run, cfg, macs, links, policy, res.Files); err != nil {
			res.Warnings = append(res.Warnings, err.Error())
		} else if p != nil {
			res.IfupdownPre = p
			res.Warnings = append(res.Warnings, "ifupdown-pre waits for "+strings.Join(p.Wait, ", ")+" instead of the whole udev coldplug ("+IfupdownPreDropIn+")")
		}
	}
	if j, err := json.MarshalIndent(rawForJSON(doc, cfg), "", " "); err == nil {
		_ = t.WriteFile(filepath.Join(state.InstanceDir(iid), "network-config.json"), append(j, '\n'), 0o600)
	}
	return res, nil
}

// datasourceConverter returns the conversion of a datasource's raw network
// data (the datasource.NetworkKey* keys), or nil when cloudroot has no
// converter for it. renderer is the renderer that will be used (EC2 adds
// policy routing only for netplan, as cloud-init does).
func datasourceConverter(ds, merged map[string]any, renderer string, nl []netconfig.Link, macs netconfig.MACs) func() (*netconfig.Config, error) {
	if v, ok := ds[datasource.NetworkKeyOpenStack]; ok {
		return func() (*netconfig.Config, error) {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("network_data.json: %w", err)
			}
			cfg, err := netconfig.ParseNetworkData(b, macs)
			if err != nil {
				return nil, fmt.Errorf("network_data.json: %w", err)
			}
			return cfg, nil
		}
	}
	if v, ok := ds[datasource.NetworkKeyEc2].(map[string]any); ok {
		return func() (*netconfig.Config, error) {
			opts := netconfig.EC2Options{
				PrimaryOnly:   !ec2FullIMDSConfig(merged),
				PolicyRouting: renderer == netconfig.RendererNetplan,
			}
			primary := ""
			if opts.PrimaryOnly {
				// cloud-init's fallback interface is the primary NIC.
				if nics := netconfig.FallbackNICs(nl); len(nics) > 0 {
					for _, l := range nl {
						if l.Name == nics[0] {
							primary = l.MAC
						}
					}
				}
			}
			return netconfig.ConvertEC2(v, primary, opts, macs)
		}
	}
	// Platform metadata documents whose converters live in pkg/netconfig
	// (keys as the datasource packages export them).
	for _, c := range []struct {
		key  string
		conv func(map[string]any, netconfig.Links) (*netconfig.Config, error)
	}{
		{"digitalocean_metadata", netconfig.ConvertDigitalOcean},
		{"vultr_metadata", netconfig.ConvertVultr},
		{"upcloud_network", netconfig.ConvertUpCloud},
		{"azure_imds_network", netconfig.ConvertAzure},
		{datasource.NetworkKeyVMware, netconfig.ConvertVMwareMap},
	} {
		if v, ok := ds[c.key].(map[string]any); ok {
			conv := c.conv
			return func() (*netconfig.Config, error) { return conv(v, macs) }
		}
	}
	if v, ok := ds["oracle_vnics"]; ok {
		secondary := false
		if dsc, ok := merged["datasource"].(map[string]any); ok {
			if o, ok := dsc["Oracle"].(map[string]any); ok {
				secondary, _ = o["configure_secondary_nics"].(bool)
			}
		}
		return func() (*netconfig.Config, error) { return netconfig.ConvertOracle(v, secondary, macs) }
	}
	if v, ok := ds[datasource.NetworkKeyENI].(string); ok {
		return func() (*netconfig.Config, error) {
			cfg, err := netconfig.ParseENI([]byte(v))
			if err != nil {
				return nil, fmt.Errorf("network_config (ENI): %w", err)
			}
			return cfg, nil
		}
	}
	return nil
}

// ec2FullIMDSConfig is datasource.Ec2.apply_full_imds_network_config
// (default true).
func ec2FullIMDSConfig(merged map[string]any) bool {
	dsc, _ := merged["datasource"].(map[string]any)
	ec2, _ := dsc["Ec2"].(map[string]any)
	switch v := ec2["apply_full_imds_network_config"].(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(v) {
		case "false", "no", "off", "0":
			return false
		}
	}
	return true
}

// klibcNetwork is the INITRAMFS source: the v1 document made from klibc
// ipconfig's state files in run, when ip=/ip6= is on the kernel command
// line or open-iscsi configured the network; nil otherwise. Files that do
// not convert are reported and the source is skipped (cloud-init fails).
func klibcNetwork(run *target.Root, cmdline string, links []bootenv.NetLink) ([]byte, []string) {
	var files []netconfig.KlibcFile
	for _, g := range []string{netconfig.KlibcStateGlob, netconfig.Klibc6StateGlob} {
		ms, _ := run.Glob(g)
		sort.Strings(ms)
		for _, m := range ms {
			b, err := run.ReadFile(m)
			if err != nil {
				return nil, []string{fmt.Sprintf("initramfs network state %s: %v; not used", m, err)}
			}
			files = append(files, netconfig.KlibcFile{Path: m, Data: b})
		}
	}
	if len(files) == 0 || !netconfig.KlibcApplicable(cmdline, run.Exists(netconfig.OpenISCSIInterfaceFile)) {
		return nil, nil
	}
	names := map[string]string{}
	for _, l := range links {
		if l.MAC != "" && l.Name != "lo" {
			names[l.Name] = l.MAC
		}
	}
	b, warnings, err := netconfig.KlibcDocument(files, names)
	if err != nil {
		return nil, []string{fmt.Sprintf("initramfs network state: %v; not used", err)}
	}
	return b, warnings
}

// rawForJSON is what network-config.json records: the input document, or
// the fallback model when there was none.
func rawForJSON(doc []byte, cfg *netconfig.Config) any {
	if doc != nil {
		if m, _, err := yaml11.LoadMap("network-config", doc); err == nil {
			return normalizeJSON(m)
		}
	}
	return cfg
}

func normalizeJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeJSON(e)
		}
	case map[any]any:
		m := map[string]any{}
		for k, e := range t {
			m[fmt.Sprint(k)] = normalizeJSON(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = normalizeJSON(e)
		}
	}
	return v
}

// networkEveryBoot reports whether the network configuration is applied on
// every boot, not only a new instance: `updates: {network: {when: [...]}}`
// when the configuration gives it, else the datasource's default update
// events (cloud-init's update_event_enabled), asking for boot or
// boot-legacy.
func networkEveryBoot(cfg map[string]any, dsEvents []string) bool {
	u, _ := cfg["updates"].(map[string]any)
	n, _ := u["network"].(map[string]any)
	var when []string
	if w, ok := n["when"].([]any); ok {
		for _, e := range w {
			when = append(when, fmt.Sprint(e))
		}
	} else {
		when = dsEvents
	}
	for _, s := range when {
		if s == "boot" || s == "boot-legacy" {
			return true
		}
	}
	return false
}
