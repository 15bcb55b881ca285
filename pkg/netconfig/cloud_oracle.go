package netconfig

// Oracle Cloud VNIC metadata (http://169.254.169.254/opc/v{1,2}/vnics/)
// converted to network config v1 as cloud-init's DataSourceOracle
// network_config property and _add_network_config_from_opc_imds do:
//   - On an iSCSI root (the initramfs configured the network the root
//     lives on), the base is the initramfs's own configuration: klibc
//     ipconfig's state files converted as the INITRAMFS source does (the
//     primary VNIC stays as the initramfs set it up). Only with
//     configure_secondary_nics are VNICs added, and only those after the
//     first; none when vnics[0] has a nicIndex (a bare metal machine:
//     skipped with a warning, as cloud-init does).
//   - When the base configures nothing (the root is not on iSCSI, or the
//     initramfs state is missing or unreadable), every VNIC is configured,
//     whatever configure_secondary_nics says: the first (the primary) by
//     DHCP — dhcp6 when it has no IPv4 subnet — the others statically,
//     privateIp/<prefix of subnetCidrBlock>, or their first ipv6Addresses
//     entry /128 when they have no IPv4 subnet.
//   - Every VNIC interface gets mtu 9000; a VNIC whose MAC is not on the
//     machine is skipped with a warning. A VNIC that cannot be read (no
//     macAddr, no usable address) stops the additions with a warning and
//     keeps what was added before, as cloud-init's logged exception does.
// Not done: cloud-init's netfailover check (dropping the MAC match of a
// virtio net_failover master), which needs the live driver state.

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// OracleMTU is the MTU cloud-init sets on Oracle VNICs.
const OracleMTU = 9000

// Keys of the object form of ConvertOracle's document, the form the
// Oracle datasource hands on.
const (
	// OracleKeyVNICs is the vnics document (a list, the primary first).
	OracleKeyVNICs = "vnics"
	// OracleKeyISCSIRoot is true when the root is on iSCSI.
	OracleKeyISCSIRoot = "iscsi_root"
	// OracleKeyInitramfs lists the initramfs's klibc state files as
	// {"path": ..., "content": ...} objects, in the order they are read.
	OracleKeyInitramfs = "initramfs"
	// OracleKeySecondary is configure_secondary_nics as the datasource
	// saw it; when present it wins over ConvertOracle's argument.
	OracleKeySecondary = "configure_secondary_nics"
)

// ConvertOracle converts Oracle's vnics metadata to a network config v1.
// doc is either the vnics list itself (a root not on iSCSI) or an object
// with the OracleKey* keys. configureSecondary is the datasource's
// configure_secondary_nics when doc does not carry it. links names the
// interfaces by MAC; when it is a MACs table, the initramfs entries also
// get their MAC addresses, as cloud-init adds them.
func ConvertOracle(doc any, configureSecondary bool, links Links) (*Config, error) {
	var vnics []any
	var iscsi bool
	var files []KlibcFile
	var warnings []string
	switch d := doc.(type) {
	case []any:
		vnics = d
	default:
		m := mapOf(doc)
		if m == nil {
			return nil, fmt.Errorf("oracle: VNIC metadata is a %T: %w", doc, ErrNoConfig)
		}
		vnics = listOf(m[OracleKeyVNICs])
		iscsi = pyTruthy(m[OracleKeyISCSIRoot])
		if v, ok := m[OracleKeySecondary].(bool); ok {
			configureSecondary = v
		}
		for i, f := range listOf(m[OracleKeyInitramfs]) {
			fm := mapOf(f)
			if fm == nil {
				warnings = append(warnings, fmt.Sprintf("oracle: initramfs[%d] is not an object; skipped", i))
				continue
			}
			files = append(files, KlibcFile{Path: leafString(fm["path"]), Data: []byte(leafString(fm["content"]))})
		}
	}
	var config []any
	if iscsi {
		base, ws, err := klibcDoc(files, linkNames(links))
		warnings = append(warnings, ws...)
		if err == nil {
			config = listOf(mustGet(base, "config"))
		} else if !errors.Is(err, ErrNoConfig) {
			warnings = append(warnings, "oracle: initramfs network state: "+err.Error())
		}
		if len(config) == 0 {
			warnings = append(warnings, "oracle: could not obtain network configuration from initramfs; falling back to IMDS")
		}
	}
	setPrimary := len(config) == 0
	if setPrimary || configureSecondary {
		entries, ws := oracleVNICs(vnics, setPrimary, links)
		config = append(config, entries...)
		warnings = append(warnings, ws...)
	}
	if len(config) == 0 {
		return nil, fmt.Errorf("oracle: no VNIC is configured on this machine (%s): %w", strings.Join(warnings, "; "), ErrNoConfig)
	}
	return finishConverted(omapOf("version", 1, "config", config), links, warnings)
}

// oracleVNICs is _add_network_config_from_opc_imds: the v1 entries of the
// VNICs (all of them when setPrimary, else those after the first).
func oracleVNICs(vnics []any, setPrimary bool, links Links) ([]any, []string) {
	if len(vnics) == 0 {
		return nil, []string{"oracle: no VNIC metadata"}
	}
	if !setPrimary {
		if _, bm := mapOf(vnics[0])["nicIndex"]; bm {
			return nil, []string{"oracle: VNIC metadata indicates this is a bare metal machine; skipping secondary VNIC configuration"}
		}
		vnics = vnics[1:]
	}
	var warnings []string
	var config []any
	for i, raw := range vnics {
		idx := i
		if !setPrimary {
			idx++
		}
		primary := setPrimary && i == 0
		entry, err := oracleVNIC(raw, primary, links)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("oracle: vnics[%d]: %v; no further VNIC configured", idx, err))
			break
		}
		if entry == nil {
			warnings = append(warnings, fmt.Sprintf("oracle: interface with MAC %s not found; skipping", strings.ToLower(leafString(mapOf(raw)["macAddr"]))))
			continue
		}
		config = append(config, entry)
	}
	return config, warnings
}

// oracleVNIC is one VNIC's v1 entry, or nil when its MAC is not here.
func oracleVNIC(raw any, primary bool, links Links) (*omap, error) {
	v := mapOf(raw)
	if v == nil {
		return nil, errors.New("not an object")
	}
	mac := strings.ToLower(leafString(v["macAddr"]))
	if mac == "" {
		return nil, errors.New("no macAddr")
	}
	name, ok := nameByMAC(links, mac)
	if !ok {
		return nil, nil
	}
	subnet, err := oracleSubnet(v, primary)
	if err != nil {
		return nil, err
	}
	return omapOf("name", name, "type", "physical", "mac_address", mac, "mtu", OracleMTU, "subnets", []any{subnet}), nil
}

// oracleSubnet is the VNIC's subnet: IPv4 when it has an IPv4 subnet
// (subnetCidrBlock, strictly a network), else IPv6 from ipv6Addresses.
func oracleSubnet(v map[string]any, primary bool) (*omap, error) {
	cidr := leafString(v["subnetCidrBlock"])
	p, perr := netip.ParsePrefix(cidr)
	if perr == nil && p.Addr().Is4() {
		if p != p.Masked() {
			return nil, fmt.Errorf("subnetCidrBlock %q has host bits set", cidr)
		}
		if primary {
			return omapOf("type", "dhcp"), nil
		}
		ip, err := netip.ParseAddr(leafString(v["privateIp"]))
		if err != nil || !ip.Is4() {
			return nil, fmt.Errorf("bad privateIp %q", leafString(v["privateIp"]))
		}
		return omapOf("type", "static", "address", fmt.Sprintf("%s/%d", ip, p.Bits())), nil
	}
	v6 := strList(v["ipv6Addresses"])
	if len(v6) == 0 {
		return nil, fmt.Errorf("bad subnetCidrBlock %q and no ipv6Addresses", cidr)
	}
	if primary {
		return omapOf("type", "dhcp6"), nil
	}
	ip, err := netip.ParseAddr(v6[0])
	if err != nil || !ip.Is6() || ip.Zone() != "" {
		return nil, fmt.Errorf("bad ipv6Addresses[0] %q", v6[0])
	}
	return omapOf("type", "static", "address", ip.String()+"/128"), nil
}

// linkNames inverts a MACs table (name → MAC) for the klibc entries; other
// Links cannot be enumerated, so the entries then carry no MAC.
func linkNames(links Links) map[string]string {
	m, ok := links.(MACs)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for mac, name := range m {
		if prev, dup := out[name]; !dup || strings.ToLower(mac) < prev {
			out[name] = strings.ToLower(mac)
		}
	}
	return out
}
