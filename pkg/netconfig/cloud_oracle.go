package netconfig

// Oracle Cloud VNIC metadata (http://169.254.169.254/opc/v{1,2}/vnics/)
// converted to network config v1 as cloud-init's DataSourceOracle
// _add_network_config_from_opc_imds does (IPv4 metadata endpoint):
//   - vnics[0] is the primary VNIC: a dhcp subnet on the interface with its
//     macAddr;
//   - with configure_secondary_nics every further VNIC gets a static subnet
//     privateIp/<prefix of subnetCidrBlock>;
//   - every configured interface gets mtu 9000; a VNIC whose MAC is not on
//     the machine is skipped with a warning.
// cloud-init configures the primary from the initramfs (or a fallback)
// when it can; a pure converter has neither, so it always configures it
// from the metadata.

import (
	"fmt"
	"net/netip"
	"strings"
)

// OracleMTU is the MTU cloud-init sets on Oracle VNICs.
const OracleMTU = 9000

// ConvertOracle converts Oracle's vnics metadata (a list, or an object with
// a `vnics` list) to a network config v1.
func ConvertOracle(vnicsDoc any, configureSecondary bool, links Links) (*Config, error) {
	vnics, ok := vnicsDoc.([]any)
	if !ok {
		vnics = listOf(mapOf(vnicsDoc)["vnics"])
	}
	if len(vnics) == 0 {
		return nil, fmt.Errorf("oracle: no VNIC metadata: %w", ErrNoConfig)
	}
	if !configureSecondary {
		vnics = vnics[:1]
	}
	var warnings []string
	var config []any
	for i, raw := range vnics {
		v := mapOf(raw)
		if v == nil {
			return nil, fmt.Errorf("oracle: vnics[%d] is not an object", i)
		}
		mac := strings.ToLower(leafString(v["macAddr"]))
		name, ok := nameByMAC(links, mac)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("oracle: interface with MAC %s not found; skipping", mac))
			continue
		}
		subnet := omapOf("type", "dhcp")
		if i > 0 {
			p, err := netip.ParsePrefix(leafString(v["subnetCidrBlock"]))
			if err != nil || p != p.Masked() {
				return nil, fmt.Errorf("oracle: vnics[%d]: bad subnetCidrBlock %q", i, leafString(v["subnetCidrBlock"]))
			}
			subnet = omapOf("type", "static", "address", fmt.Sprintf("%s/%d", leafString(v["privateIp"]), p.Bits()))
		}
		config = append(config, omapOf("name", name, "type", "physical", "mac_address", mac, "mtu", OracleMTU,
			"subnets", []any{subnet}))
	}
	if len(config) == 0 {
		return nil, fmt.Errorf("oracle: no VNIC is present on this machine: %w", ErrNoConfig)
	}
	return finishConverted(omapOf("version", 1, "config", config), links, warnings)
}
