package bootenv

import (
	"os"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"path/filepath"
	"sort"
	"strings"
)

// NetLink is a network interface as sysfs shows it, without netlink: what
// the network configuration needs to resolve MAC addresses and pick a
// fallback NIC.
type NetLink struct {
	Name      string
	MAC       string
	Driver    string
	Carrier   bool
	Dormant   bool
	OperState string
	Bridge    bool
	Bond      bool
	Member    bool
	Virtual   bool
	// Names are what systemd's udev would name the device (net_id).
	Names NetNames
	// IPv6 is what the link was seen to offer for IPv6 (router
	// advertisements observed while it was up); set by the caller.
	IPv6 netconfig.IPv6Offer
}

// NetLinks lists <sysRoot>/class/net (sysRoot "" means /sys), sorted by name.
// Unreadable attributes are left empty; a missing directory gives nil.
func NetLinks(sysRoot string) []NetLink {
	if sysRoot == "" {
		sysRoot = DefaultSysRoot
	}
	dir := filepath.Join(sysRoot, "class", "net")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []NetLink
	for _, e := range ents {
		n := e.Name()
		p := filepath.Join(dir, n)
		read := func(f string) string {
			b, err := os.ReadFile(filepath.Join(p, f))
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(b))
		}
		l := NetLink{Name: n, MAC: strings.ToLower(read("address")), Carrier: read("carrier") == "1",
			Dormant: read("dormant") == "1", OperState: read("operstate")}
		if t, err := os.Readlink(filepath.Join(p, "device", "driver")); err == nil {
			l.Driver = filepath.Base(t)
		}
		if _, err := os.Stat(filepath.Join(p, "bridge")); err == nil {
			l.Bridge = true
		}
		if _, err := os.Stat(filepath.Join(p, "bonding")); err == nil {
			l.Bond = true
		}
		if _, err := os.Stat(filepath.Join(p, "master")); err == nil {
			l.Member = true
		}
		if t, err := os.Readlink(p); err == nil && strings.Contains(t, "/virtual/") {
			l.Virtual = true
		}
		l.Names = PredictableNames(sysRoot, n)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
