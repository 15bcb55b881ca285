package distro

// The default /etc/cloud/cloud.cfg. cloud-init's packaging renders
// config/cloud.cfg.tmpl once per variant; cloudroot renders its own template
// (templates/cloud.cfg.tmpl) with the same Jinja engine as user-data, fed
// with this package's facts, so the module lists and system_info a target
// gets are, as YAML data, the ones cloud-init's package for that distro
// installs. testdata/cloudcfg holds upstream's renderings
// (scripts/goldens/cloudcfg.sh) and the golden test compares them.

import (
	"fmt"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/userdata"
	"github.com/cloudroot/cloudroot/templates"
)

// SystemInfo is the system_info section of a variant's default cloud.cfg.
type SystemInfo struct {
	Distro  string  `json:"distro"`
	User    User    `json:"default_user"`
	Network Network `json:"network"`
	// SSHService is ssh_svcname ("" on the BSDs, which do not set it).
	SSHService string `json:"ssh_svcname,omitempty"`
	// NTPClient is ntp_client ("auto" on the Debian family).
	NTPClient string `json:"ntp_client,omitempty"`
	// DisableFallbackNetcfg: the image ships its own network settings.
	DisableFallbackNetcfg bool `json:"disable_fallback_netcfg,omitempty"`
	// Paths is system_info.paths.
	Paths map[string]string `json:"paths,omitempty"`
}

// Network is system_info.network: the renderer and activator preference
// orders and the DHCP client order. Empty lists mean cloud-init's defaults.
type Network struct {
	DHCPClientPriority []string `json:"dhcp_client_priority,omitempty"`
	Renderers          []string `json:"renderers,omitempty"`
	Activators         []string `json:"activators,omitempty"`
}

// DefaultRenderers is cloud-init's renderer order when system_info sets
// none (renderers.DEFAULT_PRIORITY).
var DefaultRenderers = []string{"eni", "sysconfig", "netplan", "network-manager", "freebsd", "netbsd", "openbsd", "networkd"}

var (
	rhelRenderers = []string{"eni", "netplan", "network-manager", "sysconfig", "networkd"}
	renderersOf   = sync.OnceValue(func() map[string][]string {
		return map[string][]string{
			"alpine":          {"eni"},
			"azurelinux":      {"netplan", "networkd", "network-manager"},
			"debian":          {"netplan", "eni", "networkd"},
			"dragonfly":       {"freebsd"},
			"fedora":          {"netplan", "network-manager", "networkd", "sysconfig", "eni"},
			"freebsd":         {"freebsd"},
			"netbsd":          {"netbsd"},
			"openbsd":         {"openbsd"},
			"mariner":         {"networkd"},
			"photon":          {"networkd"},
			"openmandriva":    {"network-manager", "networkd"},
			"raspberry-pi-os": {"netplan", "network-manager"},
			"ubuntu":          {"netplan", "eni", "sysconfig"},
			VariantUnknown:    {"netplan", "eni", "sysconfig"},
		}
	})
	activatorsOf = sync.OnceValue(func() map[string][]string {
		return map[string][]string{
			"debian":          {"netplan", "eni", "network-manager", "networkd"},
			"raspberry-pi-os": {"netplan", "network-manager"},
			"ubuntu":          {"netplan", "eni", "network-manager", "networkd"},
			VariantUnknown:    {"netplan", "eni", "network-manager", "networkd"},
		}
	})
)

// variantSystemInfo is a variant's system_info.
func variantSystemInfo(v string) SystemInfo {
	si := SystemInfo{Distro: v, User: variantUser(v)}
	switch v {
	case "dragonfly":
		si.Distro = "dragonflybsd"
	case VariantUnknown:
		si.Distro = "ubuntu"
	}
	if r, ok := renderersOf()[v]; ok {
		si.Network.Renderers = r
	} else if isRHEL(v) {
		si.Network.Renderers = rhelRenderers
	}
	si.Network.Activators = activatorsOf()[v]
	switch v {
	case "ubuntu", VariantUnknown:
		si.Network.DHCPClientPriority = []string{"dhcpcd", "dhclient", "udhcpc"}
	}
	switch v {
	case "debian", "ubuntu", VariantUnknown:
		si.NTPClient = "auto"
	case "photon", "raspberry-pi-os":
		si.DisableFallbackNetcfg = true
	}
	switch {
	case isBSD(v):
		si.Paths = map[string]string{"run_dir": "/var/run/cloud-init/"}
	case v != "raspberry-pi-os":
		si.Paths = map[string]string{"cloud_dir": "/var/lib/cloud/", "templates_dir": "/etc/cloud/templates/"}
	}
	switch {
	case isBSD(v):
	case v == "debian" || v == "ubuntu" || v == "raspberry-pi-os" || v == VariantUnknown:
		si.SSHService = "ssh"
	default:
		si.SSHService = "sshd"
	}
	return si
}

// Renderers is the network renderer preference order: system_info's when
// it sets one, else cloud-init's default.
func (n Network) RendererOrder() []string {
	if len(n.Renderers) > 0 {
		return n.Renderers
	}
	return DefaultRenderers
}

// templateVars is what templates/cloud.cfg.tmpl is rendered with.
func (si SystemInfo) templateVars(variant string) map[string]any {
	net := map[string]any{}
	for k, l := range map[string][]string{
		"dhcp_client_priority": si.Network.DHCPClientPriority,
		"renderers":            si.Network.Renderers,
		"activators":           si.Network.Activators,
	} {
		if len(l) > 0 {
			net[k] = strs(l)
		}
	}
	sys := map[string]any{
		"distro":       si.Distro,
		"default_user": si.User.Map(),
		"network":      net,
		"ssh_svcname":  si.SSHService,
		"ntp_client":   si.NTPClient,
	}
	if si.DisableFallbackNetcfg {
		sys["disable_fallback_netcfg"] = true
	}
	if len(si.Paths) > 0 {
		p := map[string]any{}
		for k, v := range si.Paths {
			p[k] = v
		}
		sys["paths"] = p
	}
	return map[string]any{
		"variant":     variant,
		"is_rhel":     isRHEL(variant),
		"is_bsd":      isBSD(variant),
		"system_info": sys,
	}
}

// DefaultCloudConfig is the /etc/cloud/cloud.cfg cloud-init's package
// installs on this distro: the variant's module lists per stage and its
// system_info, in cloudroot's wording.
func DefaultCloudConfig(info Info) ([]byte, error) {
	return CloudConfigForVariant(info.Variant())
}

// CloudConfigForVariant renders the default cloud.cfg of a cloud.cfg
// variant (one of Variants).
func CloudConfigForVariant(variant string) ([]byte, error) {
	known := false
	for _, v := range Variants {
		known = known || v == variant
	}
	if !known {
		return nil, fmt.Errorf("rendering the default cloud.cfg: unknown variant %q", variant)
	}
	vars := variantSystemInfo(variant).templateVars(variant)
	out, missing, err := userdata.RenderJinja(templates.CloudCfg, vars)
	if err != nil {
		return nil, fmt.Errorf("rendering the default cloud.cfg for %s: %w", variant, err)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("rendering the default cloud.cfg for %s: undefined template variables %v", variant, missing)
	}
	return out, nil
}
