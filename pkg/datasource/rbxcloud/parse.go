package rbxcloud

// Pure parsing: cloud.json and user.data into Data.

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Labels are the filesystem labels of a Rootbox/HyperOne metadata disk.
func Labels() []string { return []string{"CLOUDMD", "cloudmd"} }

// Candidates are the devices labelled CLOUDMD or cloudmd, in the order
// given.
func Candidates(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	for _, d := range devs {
		for _, l := range Labels() {
			if d.FS.Label == l {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// Input is what a metadata disk holds.
type Input struct {
	// Source names the disk in errors ("/dev/vdb").
	Source string
	// CloudJSON is cloud.json; UserData is user.data (nil when absent).
	CloudJSON []byte
	UserData  []byte
	// EtcHostsPresent is true when the target root has a non-empty
	// /etc/hosts (cloud-init then leaves manage_etc_hosts off).
	EtcHostsPresent bool
}

// ParseCloudJSON decodes cloud.json: an object with `vm` (an object with
// `_id` and `name`) and `netadp` (a list of adapters).
func ParseCloudJSON(b []byte) (map[string]any, error) {
	m, err := jsondoc.Object(b)
	if err != nil {
		return nil, err
	}
	vm, ok := m["vm"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no `vm` object")
	}
	if _, ok := m["netadp"].([]any); !ok {
		return nil, fmt.Errorf("no `netadp` list")
	}
	if s, ok := vm["_id"].(string); !ok || s == "" {
		return nil, fmt.Errorf("no vm._id")
	}
	return m, nil
}

// Parse builds Data from a disk's files read at subplatform.
func Parse(in Input, subplatform string) (*datasource.Data, error) {
	m, err := ParseCloudJSON(in.CloudJSON)
	if err != nil {
		return nil, fmt.Errorf("%s/cloud.json: %w", in.Source, err)
	}
	vm := m["vm"].(map[string]any)
	netadps := m["netadp"].([]any)
	name, _ := vm["name"].(string)
	md := map[string]any{
		"instance-id":    vm["_id"],
		"local-hostname": name,
		// cloud-init gives the keys to the default user through the
		// configuration, not as the datasource's public keys.
		"public-keys": []any{},
	}
	add, _ := m["additionalMetadata"].(map[string]any)
	username, _ := add["username"].(string)
	var hash any
	if pw, ok := add["password"].(map[string]any); ok {
		hash = pw["sha512"]
	}
	keys := []any{}
	if k, ok := add["sshKeys"].([]any); ok {
		keys = k
	}
	var user any = username
	if username == "" {
		user = nil
	}
	netcfg, arp, err := network(netadps)
	if err != nil {
		return nil, fmt.Errorf("%s/cloud.json: %w", in.Source, err)
	}
	d := &datasource.Data{
		NetworkUpdateEvents: NetworkUpdateEvents,
		Name:                "RbxCloud", Platform: "rbxcloud", CloudName: "rbxcloud", Subplatform: subplatform,
		Mode: "net", MetaData: md, UserData: in.UserData, NetworkConfig: netcfg,
		Config: map[string]any{
			"ssh_pwauth":   true,
			"disable_root": true,
			"system_info": map[string]any{"default_user": map[string]any{
				"name": user, "gecos": user, "sudo": []any{"ALL=(ALL) NOPASSWD:ALL"},
				"passwd": hash, "lock_passwd": false, "ssh_authorized_keys": keys,
			}},
			"manage_etc_hosts": !in.EtcHostsPresent,
		},
		DS: map[string]any{"netadp": netadps, "gratuitous_arp": arp},
	}
	return d, nil
}

// network is cloud-init's generate_network_config (network-config v1, one
// static physical ethN per adapter in order) and the gratuitous ARP
// announcements it makes on activation: from each address to its
// adapter's gateway and the two addresses after the next.
func network(netadps []any) (map[string]any, []any, error) {
	cfg := []any{}
	arp := []any{}
	for i, a := range netadps {
		ad, ok := a.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("netadp[%d] is not an object", i)
		}
		mac, ok := ad["macaddress"].(string)
		if !ok {
			return nil, nil, fmt.Errorf("netadp[%d] has no macaddress", i)
		}
		nw, ok := ad["network"].(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("netadp[%d] has no network", i)
		}
		gw, _ := nw["gateway"].(string)
		var ns any
		if dns, ok := nw["dns"].(map[string]any); ok {
			ns = dns["nameservers"]
		}
		ips, _ := ad["ip"].([]any)
		subnets := []any{}
		for j, ipv := range ips {
			ip, ok := ipv.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("netadp[%d].ip[%d] is not an object", i, j)
			}
			addr, ok := ip["address"].(string)
			if !ok {
				return nil, nil, fmt.Errorf("netadp[%d].ip[%d] has no address", i, j)
			}
			subnets = append(subnets, map[string]any{
				"type": "static", "address": addr, "netmask": nw["netmask"], "control": "auto",
				"gateway": nw["gateway"], "dns_nameservers": ns,
			})
			targets, err := threeIPs(gw)
			if err != nil {
				return nil, nil, fmt.Errorf("netadp[%d].network.gateway: %w", i, err)
			}
			for _, t := range targets {
				arp = append(arp, map[string]any{"source": addr, "destination": t})
			}
		}
		cfg = append(cfg, map[string]any{
			"type": "physical", "name": fmt.Sprintf("eth%d", i),
			"mac_address": strings.ToLower(mac), "subnets": subnets,
		})
	}
	return map[string]any{"version": 1, "config": cfg}, arp, nil
}

// threeIPs is cloud-init's get_three_ips: the gateway, gateway+2,
// gateway+3.
func threeIPs(gw string) ([]any, error) {
	a, err := netip.ParseAddr(gw)
	if err != nil || !a.Is4() {
		return nil, fmt.Errorf("%q is not an IPv4 address", gw)
	}
	out := []any{gw}
	n := a
	for i := 1; i <= 3; i++ {
		n = n.Next()
		if !n.IsValid() || !n.Is4() {
			return nil, fmt.Errorf("%q + %d overflows", gw, i)
		}
		if i >= 2 {
			out = append(out, n.String())
		}
	}
	return out, nil
}
