package integration

import (
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// Network configuration (issue #5): the initramfs renders the target's
// network configuration with the renderer cloud-init would pick for it.
// The test image ships 99-disable-network-config.cfg because no renderer's
// tools exist in it; these tests remove it and plant the files a renderer
// is recognised by.

const (
	disableNetworkCfg = "/etc/cloud/cloud.cfg.d/99-disable-network-config.cfg"
	netplanYAML       = "/etc/netplan/50-cloud-init.yaml"
	networkConfigJSON = "/var/lib/cloud/instance/network-config.json"
	initLog           = "/var/log/cloud-init.log"

	// cloudInitNetHeader is the comment cloud-init puts at the top of every
	// network file it renders (cloudinit/net/renderer.py header).
	cloudInitNetHeader = `# This file is generated from information provided by the datasource.  Changes
# to it will not persist across an instance reboot.  To disable cloud-init's
# network configuration capabilities, write a file
# /etc/cloud/cloud.cfg.d/99-disable-network-config.cfg with the following:
# network: {config: disabled}
`

	netUserData = `#cloud-config
hostname: nettest
runcmd:
  - echo net-runcmd >> /var/log/net-runcmd.log
`
)

// twoNICsNetworkConfig is the NoCloud network-config of TestNetworkTwoNICs:
// the first NIC (DHCP) renamed lan0, the second (static) renamed mgmt0,
// both matched by MAC.
var twoNICsNetworkConfig = `version: 2
ethernets:
  lan:
    match:
      macaddress: "` + harness.NICMAC(0) + `"
    set-name: lan0
    dhcp4: true
  mgmt:
    match:
      macaddress: "` + harness.NICMAC(1) + `"
    set-name: mgmt0
    addresses: [192.0.2.10/24]
    routes:
      - to: 198.51.100.0/24
        via: 192.0.2.1
    nameservers:
      addresses: [192.0.2.53]
      search: [example.test]
`

// netVM copies the root disk and, unless keepDisable, removes the image's
// network-disabling config and plants the files given (path -> content;
// every one executable) so that a renderer is available in the target.
func netVM(t *testing.T, keepDisable bool, plant map[string]string, dirs ...string) *vm {
	t.Helper()
	v := newVM(t)
	im, err := harness.OpenImage(v.disk)
	if err != nil {
		t.Fatal(err)
	}
	if !im.Exists(disableNetworkCfg) {
		t.Fatalf("the test image has no %s (scripts/mkrootfs.sh ships it)", disableNetworkCfg)
	}
	if !keepDisable {
		if err := im.Remove(disableNetworkCfg); err != nil {
			t.Fatal(err)
		}
		if im.Exists(disableNetworkCfg) {
			t.Fatalf("%s still exists after Remove", disableNetworkCfg)
		}
	}
	for _, d := range dirs {
		if err := im.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range plant {
		if err := im.MkdirAll(path.Dir(p)); err != nil {
			t.Fatal(err)
		}
		if err := im.WriteFile(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := im.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// stubTool stands for a package's binary: the renderer only checks that it
// exists, nothing runs it in the initramfs.
const stubTool = "#!/bin/sh\nexit 0\n"

// networkLogLine returns the init log's "network configuration" line.
func (d *disk) networkLogLine() string {
	d.t.Helper()
	log := d.read(initLog)
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "network configuration") {
			return l
		}
	}
	d.t.Errorf("%s has no \"network configuration\" line; it ends:\n%s", initLog, tail(log, 30))
	return ""
}

// logAttrs reads the key=value attributes of a log line (cloud-init's
// format in /var/log/cloud-init.log, "... - file.py[LEVEL]: message k=v",
// whose message is returned as "msg", or the console's unquoted form).
func logAttrs(line string) map[string]string {
	out := map[string]string{}
	for _, m := range reLogAttr.FindAllStringSubmatch(line, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
		}
		out[m[1]] = v
	}
	if i := strings.Index(line, "]: "); i >= 0 && out["msg"] == "" {
		msg := line[i+3:]
		if loc := reLogAttr.FindStringIndex(msg); loc != nil {
			msg = msg[:loc[0]]
		}
		out["msg"] = msg
	}
	return out
}

var reLogAttr = regexp.MustCompile(`(?:^|\s)([\w.-]+)=("(?:[^"\\]|\\.)*"|\S*)`)

// wantLogAttrs checks attributes of the network log line (key -> value).
func wantLogAttrs(t *testing.T, line string, want map[string]string) {
	t.Helper()
	got := logAttrs(line)
	for k, w := range want {
		if v, ok := got[k]; !ok || v != w {
			t.Errorf("network log line: %s = %q (present %v), want %q: %s", k, v, ok, w, line)
		}
	}
}

// renderedNetworkFiles lists what cloud-init/cloudroot may have rendered.
func (d *disk) renderedNetworkFiles() []string {
	d.t.Helper()
	var out []string
	if d.im.Exists(netplanYAML) {
		out = append(out, netplanYAML)
	}
	for _, dir := range []string{"/etc/systemd/network", "/etc/network/interfaces.d", "/etc/NetworkManager/system-connections"} {
		names, err := d.im.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			if strings.HasPrefix(n, "10-cloud-init-") || strings.HasPrefix(n, "50-cloud-init") || strings.HasPrefix(n, "cloud-init-") {
				out = append(out, dir+"/"+n)
			}
		}
	}
	return out
}

// TestNetworkTwoNICs: a Debian target with netplan gets the datasource's v2
// config for two NICs (matched by MAC, renamed) as 50-cloud-init.yaml.
func TestNetworkTwoNICs(t *testing.T) {
	t.Parallel()
	v := netVM(t, false, map[string]string{"/usr/sbin/netplan": stubTool}, "/etc/netplan")
	seed := v.seed(map[string][]byte{
		"meta-data":      meta("iid-net-two-nics", "nettest"),
		"user-data":      []byte(netUserData),
		"network-config": []byte(twoNICsNetworkConfig),
	}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, ExtraNICs: 1,
		Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsoleMatch(t, r, `network configuration source=ds renderer=netplan\b`)

	d := v.image()
	wantLogAttrs(t, d.networkLogLine(), map[string]string{"msg": "network configuration",
		"source": "ds", "renderer": "netplan", "files": netplanYAML})
	d.wantMode(netplanYAML, 0o600, 0, 0)
	raw, ok := d.readOpt(netplanYAML)
	if !ok {
		t.Fatalf("%s was not rendered; rendered: %q", netplanYAML, d.renderedNetworkFiles())
	}
	t.Logf("%s:\n%s", netplanYAML, raw)
	if !strings.HasPrefix(raw, cloudInitNetHeader) {
		t.Errorf("%s does not start with cloud-init's header:\n%s", netplanYAML, raw)
	}
	var got struct {
		Network struct {
			Version   int                       `yaml:"version"`
			Ethernets map[string]map[string]any `yaml:"ethernets"`
		} `yaml:"network"`
	}
	if err := yaml.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("%s does not parse: %v\n%s", netplanYAML, err, raw)
	}
	if got.Network.Version != 2 {
		t.Errorf("%s: network.version = %d, want 2:\n%s", netplanYAML, got.Network.Version, raw)
	}
	want := map[string]map[string]any{
		"lan": {
			"match":    map[string]any{"macaddress": harness.NICMAC(0)},
			"set-name": "lan0",
			"dhcp4":    true,
		},
		"mgmt": {
			"match":     map[string]any{"macaddress": harness.NICMAC(1)},
			"set-name":  "mgmt0",
			"addresses": []any{"192.0.2.10/24"},
			"routes":    []any{map[string]any{"to": "198.51.100.0/24", "via": "192.0.2.1"}},
			"nameservers": map[string]any{
				"addresses": []any{"192.0.2.53"},
				"search":    []any{"example.test"},
			},
		},
	}
	if !reflect.DeepEqual(got.Network.Ethernets, want) {
		t.Errorf("%s ethernets = %#v\nwant %#v\nfile:\n%s", netplanYAML, got.Network.Ethernets, want, raw)
	}
	if extra := d.renderedNetworkFiles(); len(extra) != 1 {
		t.Errorf("rendered network files = %q, want only %s", extra, netplanYAML)
	}

	// network-config.json records the datasource's document.
	d.wantMode(networkConfigJSON, 0o600, 0, 0)
	d.wantContains(networkConfigJSON, `"set-name": "mgmt0"`, `"192.0.2.10/24"`, harness.NICMAC(1))

	if h := d.hostname(); h != "nettest" {
		t.Errorf("/etc/hostname = %q, want nettest", h)
	}
	d.wantLines("/var/log/net-runcmd.log", 1)
	d.wantStagesDone(d.status(), true)
}

// TestNetworkFallbackNetworkd: no network config anywhere and only
// systemd-networkd in the target: the fallback (DHCP on the first NIC,
// matched by MAC) rendered for networkd.
func TestNetworkFallbackNetworkd(t *testing.T) {
	t.Parallel()
	v := netVM(t, false, map[string]string{"/usr/lib/systemd/systemd-networkd": stubTool})
	seed := v.seed(map[string][]byte{
		"meta-data": meta("iid-net-fallback", "nettest"),
		"user-data": []byte(netUserData),
	}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, ExtraNICs: 1,
		Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsoleMatch(t, r, `network configuration source=fallback renderer=networkd\b`)

	d := v.image()
	line := d.networkLogLine()
	wantLogAttrs(t, line, map[string]string{"source": "fallback", "renderer": "networkd"})
	d.wantAbsent(netplanYAML)

	names, err := d.im.ReadDir("/etc/systemd/network")
	if err != nil {
		t.Fatalf("/etc/systemd/network: %v (log line: %s)", err, line)
	}
	var networks []string
	for _, n := range names {
		if strings.HasPrefix(n, "10-cloud-init-") && strings.HasSuffix(n, ".network") {
			networks = append(networks, n)
		}
	}
	if len(networks) != 1 {
		t.Fatalf("/etc/systemd/network has %q, want exactly one 10-cloud-init-<nic>.network", names)
	}
	nic := strings.TrimSuffix(strings.TrimPrefix(networks[0], "10-cloud-init-"), ".network")
	p := "/etc/systemd/network/" + networks[0]
	d.wantMode(p, 0o644, 0, 0)
	raw := d.read(p)
	t.Logf("%s:\n%s", p, raw)
	// cloud-init 26.x's networkd files carry no header comment.
	if strings.HasPrefix(raw, "#") {
		t.Errorf("%s starts with a comment (cloud-init 26.x writes none):\n%s", p, raw)
	}
	ini := parseINI(raw)
	// cloud-init's fallback takes eth0 when it has carrier; which of the two
	// virtio NICs the kernel names eth0 depends on probe order, so the
	// rendered MAC must be one of ours and the name must be eth0.
	mac := ini["Match"]["MACAddress"]
	if mac != harness.NICMAC(0) && mac != harness.NICMAC(1) {
		t.Errorf("%s [Match] MACAddress = %q, want one of the VM's NICs (%s, %s):\n%s", p, mac, harness.NICMAC(0), harness.NICMAC(1), raw)
	}
	if nic != "eth0" {
		t.Errorf("fallback NIC = %s, want eth0 (connected)", nic)
	}
	if got := ini["Match"]["Name"]; got != nic {
		t.Errorf("%s [Match] Name = %q, want %q:\n%s", p, got, nic, raw)
	}
	// cloud-init's fallback asks for DHCPv4 and DHCPv6: DHCP=yes (ipv4
	// would do for the first-NIC requirement).
	if got := ini["Network"]["DHCP"]; got != "yes" && got != "ipv4" {
		t.Errorf("%s [Network] DHCP = %q, want yes (or ipv4):\n%s", p, got, raw)
	}
	// The NIC keeps its name through a .link file matching the same MAC
	// (set-name in the fallback's v2 form).
	link := strings.TrimSuffix(p, ".network") + ".link"
	if lraw, ok := d.readOpt(link); !ok {
		t.Errorf("%s was not rendered", link)
	} else if li := parseINI(lraw); li["Match"]["MACAddress"] != mac || li["Link"]["Name"] != nic {
		t.Errorf("%s = %v, want [Match] MACAddress=%s, [Link] Name=%s:\n%s", link, li, mac, nic, lraw)
	}
	if files := strings.Split(logAttrs(line)["files"], ","); !slices.Contains(files, p) || !slices.Contains(files, link) {
		t.Errorf("network log line's files = %q, want %s and %s among them", files, p, link)
	}
	if got := d.renderedNetworkFiles(); len(got) != 2 {
		t.Errorf("rendered network files = %q, want only %s and %s (no file for the second NIC)", got, p, link)
	}
	d.wantExists(networkConfigJSON)
	d.wantStagesDone(d.status(), true)
}

// TestNetworkConfigDisabledByImage: the unmodified test image says
// `network: {config: disabled}` in cloud.cfg.d, which wins over the
// datasource's network-config: nothing is rendered.
func TestNetworkConfigDisabledByImage(t *testing.T) {
	t.Parallel()
	v := netVM(t, true, nil)
	seed := v.seed(map[string][]byte{
		"meta-data":      meta("iid-net-disabled", "nettest"),
		"user-data":      []byte(netUserData),
		"network-config": []byte(twoNICsNetworkConfig),
	}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, ExtraNICs: 1,
		Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsoleMatch(t, r, `network configuration source=disabled-by-system_cfg renderer= files=`)

	d := v.image()
	wantLogAttrs(t, d.networkLogLine(), map[string]string{"msg": "network configuration",
		"source": "disabled-by-system_cfg", "renderer": "", "files": ""})
	if got := d.renderedNetworkFiles(); len(got) > 0 {
		t.Errorf("network files rendered although the image disables network config: %q", got)
	}
	d.wantExists(disableNetworkCfg)
	d.wantStagesDone(d.status(), true)
}

// parseINI reads a systemd unit-style file: section -> key -> last value.
func parseINI(s string) map[string]map[string]string {
	out := map[string]map[string]string{}
	sec := ""
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			sec = l[1 : len(l)-1]
			if out[sec] == nil {
				out[sec] = map[string]string{}
			}
		default:
			if k, val, ok := strings.Cut(l, "="); ok && sec != "" {
				out[sec][strings.TrimSpace(k)] = strings.TrimSpace(val)
			}
		}
	}
	return out
}
