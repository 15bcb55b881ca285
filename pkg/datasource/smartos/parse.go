package smartos

// Pure parsing: protocol frames, and what the keys read become.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// The two SmartOS environments (cloud-init's smartos_type).
const (
	// ModeKVM is a KVM or bhyve guest: the serial port.
	ModeKVM = "kvm"
	// ModeLX is an LX-branded zone: the unix socket.
	ModeLX = "lx-brand"
)

// Errors of the protocol.
var (
	// ErrNotFrame is a line that is not a V2 frame at all (console noise,
	// a late "invalid command").
	ErrNotFrame = errors.New("not a V2 frame")
	// ErrProtocol is a V2 frame that is malformed: length, checksum,
	// request id, payload.
	ErrProtocol = errors.New("metadata protocol error")
)

// Checksum is the V2 checksum of a frame body: its CRC-32 (IEEE) as eight
// lowercase hex digits.
func Checksum(body string) string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body)))
}

// FormatRequest is one request line, newline included:
// "V2 <len> <crc> <id> <op>[ <base64 param>]\n". An empty param sends no
// payload (KEYS).
func FormatRequest(id uint32, op string, param []byte) string {
	body := fmt.Sprintf("%08x %s", id, op)
	if len(param) > 0 {
		body += " " + base64.StdEncoding.EncodeToString(param)
	}
	return frame(body)
}

// FormatReply is one reply line as the metadata server writes it (for
// fakes and tests): "V2 <len> <crc> <id> <status>[ <base64 payload>]\n".
func FormatReply(id, status string, payload []byte) string {
	body := id + " " + status
	if len(payload) > 0 {
		body += " " + base64.StdEncoding.EncodeToString(payload)
	}
	return frame(body)
}

func frame(body string) string {
	return "V2 " + strconv.Itoa(len(body)) + " " + Checksum(body) + " " + body + "\n"
}

// Reply is one parsed V2 reply.
type Reply struct {
	// RequestID is the id the reply answers, as sent (hex).
	RequestID string
	// Status is SUCCESS, NOTFOUND, or whatever else the server said.
	Status string
	// Payload is the decoded payload; nil when there was none.
	Payload []byte
}

// ParseReply parses one reply line (without its newline; a trailing CR is
// ignored). A line not starting with "V2 " is ErrNotFrame; a frame whose
// length or checksum does not match its body, or whose payload is not
// base64, is ErrProtocol. Request ids are not checked here.
func ParseReply(line string) (Reply, error) {
	line = strings.TrimSuffix(line, "\r")
	rest, ok := strings.CutPrefix(line, "V2 ")
	if !ok {
		return Reply{}, fmt.Errorf("%w: %q", ErrNotFrame, clip(line))
	}
	parts := strings.SplitN(rest, " ", 3)
	if len(parts) != 3 {
		return Reply{}, fmt.Errorf("%w: short frame %q", ErrProtocol, clip(line))
	}
	lenText, crc, body := parts[0], parts[1], parts[2]
	n, err := strconv.Atoi(lenText)
	if err != nil || n < 0 || !digits(lenText) {
		return Reply{}, fmt.Errorf("%w: bad frame length %q", ErrProtocol, clip(lenText))
	}
	if n != len(body) {
		return Reply{}, fmt.Errorf("%w: frame length %d, body has %d bytes", ErrProtocol, n, len(body))
	}
	if want := Checksum(body); crc != want {
		return Reply{}, fmt.Errorf("%w: checksum %q, body's is %s", ErrProtocol, clip(crc), want)
	}
	fields := strings.SplitN(body, " ", 3)
	if len(fields) < 2 || !hexLower(fields[0]) || fields[1] == "" {
		return Reply{}, fmt.Errorf("%w: bad frame body %q", ErrProtocol, clip(body))
	}
	r := Reply{RequestID: fields[0], Status: fields[1]}
	if len(fields) == 3 && fields[2] != "" {
		p, err := base64.StdEncoding.DecodeString(fields[2])
		if err != nil {
			return Reply{}, fmt.Errorf("%w: payload is not base64: %w", ErrProtocol, err)
		}
		r.Payload = p
	}
	return r, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func hexLower(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Attribute is one key cloud-init reads: its meta-data name, the SmartOS
// key, and whether surrounding white space is stripped.
type Attribute struct {
	Name, Key string
	Strip     bool
}

// Attributes are cloud-init's SMARTOS_ATTRIB_MAP, in the order it asks
// for them.
var Attributes = []Attribute{
	{"instance-id", "sdc:uuid", true},
	{"local-hostname", "hostname", true},
	{"public-keys", "root_authorized_keys", true},
	{"user-script", "user-script", false},
	{"legacy-user-data", "user-data", false},
	{"user-data", "cloud-init:user-data", false},
	{"iptables_disable", "iptables_disable", true},
	{"motd_sys_info", "motd_sys_info", true},
	{"availability_zone", "sdc:datacenter_name", true},
	{"vendor-data", "sdc:vendor-data", false},
	{"operator-script", "sdc:operator-script", false},
	{"hostname", "sdc:hostname", true},
	{"dns_domain", "sdc:dns_domain", true},
}

// JSONAttributes are cloud-init's SMARTOS_ATTRIB_JSON: keys holding JSON,
// asked for after Attributes.
var JSONAttributes = []Attribute{
	{Name: "network-data", Key: "sdc:nics"},
	{Name: "dns_servers", Key: "sdc:resolvers"},
	{Name: "routes", Key: "sdc:routes"},
}

// Keys are the SmartOS keys read, in order.
func Keys() []string {
	var out []string
	for _, a := range Attributes {
		out = append(out, a.Key)
	}
	for _, a := range JSONAttributes {
		out = append(out, a.Key)
	}
	return out
}

// Paths cloud-init writes on SmartOS (relative to the target root).
const (
	// DefaultCloudDir is cloud-init's cloud_dir.
	DefaultCloudDir = "/var/lib/cloud"
	// LegacyUserDataFile receives the `user-data` key on every boot.
	LegacyUserDataFile = "/var/db/mdata-user-data"
	// LegacyUserScriptLink is a symlink to the instance's user-script.
	LegacyUserScriptLink = "/var/db/user-script"
	// ProvisioningFile is renamed to ProvisionSuccessFile once meta-data
	// was read (the zone's host then keeps the zone running).
	ProvisioningFile     = "/var/svc/provisioning"
	ProvisionSuccessFile = "/var/svc/provision_success"
	// PerBootVendorScript is what the default vendor-data installs under
	// <cloud_dir>/scripts/per-boot.
	PerBootVendorScript = "01_smartos_vendor_data.sh"
)

// FileModes are the modes of the files Build puts in Data.Files, by base
// name.
var FileModes = sync.OnceValue(func() map[string]uint32 {
	return map[string]uint32{
		"user-script":     0o700,
		"operator-script": 0o700,
		"mdata-user-data": 0o400,
	}
})

// DefaultDiskAliases is cloud-init's disk_aliases default.
var DefaultDiskAliases = sync.OnceValue(func() map[string]string {
	return map[string]string{"ephemeral0": "/dev/vdb"}
})

// Input is what the metadata service answered.
type Input struct {
	// Mode is ModeKVM or ModeLX.
	Mode string
	// Subplatform is instance-data's subplatform ("serial (/dev/ttyS1)").
	Subplatform string
	// Values maps each SmartOS key that answered with a non-empty value
	// to it (base64 already undone where configured).
	Values map[string]string
	// CloudDir is cloud-init's cloud_dir; "" means DefaultCloudDir.
	CloudDir string
	// DiskAliases are the disk_aliases (device names for disk_setup).
	DiskAliases map[string]string
}

// Build turns the keys read into Data as cloud-init's _get_data does:
// meta-data has every name of Attributes and JSONAttributes (null when
// the key did not answer), local-hostname falls back to sdc:hostname then
// the instance-id, vendor-data defaults to a boothook running the
// operator-script and user-script, and sdc:nics (with sdc:resolvers,
// sdc:dns_domain and sdc:routes) becomes network config v1.
func Build(in Input) (*datasource.Data, error) {
	md := map[string]any{}
	for _, a := range Attributes {
		v, ok := in.Values[a.Key]
		if !ok {
			md[a.Name] = nil
			continue
		}
		if a.Strip {
			v = strings.TrimSpace(v)
		}
		md[a.Name] = v
	}
	for _, a := range JSONAttributes {
		v, ok := in.Values[a.Key]
		if !ok {
			md[a.Name] = nil
			continue
		}
		var j any
		if err := json.Unmarshal([]byte(v), &j); err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %w", a.Key, err)
		}
		md[a.Name] = j
	}
	iid := text(md["instance-id"])
	if iid == "" {
		return nil, errors.New("sdc:uuid: no instance id")
	}
	if strings.ContainsAny(iid, "/\x00") || iid == "." || iid == ".." {
		return nil, fmt.Errorf("sdc:uuid: %q cannot name a directory", clip(iid))
	}
	if text(md["local-hostname"]) == "" {
		if h := text(md["hostname"]); h != "" {
			md["local-hostname"] = h
		} else {
			md["local-hostname"] = iid
		}
	}
	cloudDir := in.CloudDir
	if cloudDir == "" {
		cloudDir = DefaultCloudDir
	}
	dataDir := path.Join(cloudDir, "instances", iid, "data")
	userScript := path.Join(dataDir, "user-script")
	operatorScript := path.Join(dataDir, "operator-script")
	files := map[string][]byte{}
	if s := text(md["user-script"]); s != "" {
		files[userScript] = Shebang([]byte(s))
	}
	if s := text(md["operator-script"]); s != "" {
		files[operatorScript] = []byte(s)
	}
	if s := text(md["legacy-user-data"]); s != "" {
		files[LegacyUserDataFile] = []byte(s)
	}
	if text(md["vendor-data"]) == "" {
		md["vendor-data"] = VendorData(path.Join(cloudDir, "scripts", "per-boot"), operatorScript, userScript)
	}
	d := &datasource.Data{
		NetworkUpdateEvents: NetworkUpdateEvents,
		Name:                "SmartOS", Platform: "joyent", CloudName: "joyent", Mode: "net",
		Subplatform:      in.Subplatform,
		MetaData:         md,
		VendorData:       []byte(text(md["vendor-data"])),
		AvailabilityZone: text(md["availability_zone"]),
		PublicKeys:       datasource.NormalizePubKeys(md["public-keys"]),
	}
	if ud := text(md["user-data"]); ud != "" {
		d.UserData = []byte(ud)
	}
	// cloud-init's write_boot_content, every boot: a script or legacy
	// user-data whose key is gone is removed, the legacy link follows the
	// user-script, and the provisioning marker tells the host it worked.
	d.FilesEveryBoot = true
	if len(files) > 0 {
		d.Files = files
		d.FileModes = map[string]fs.FileMode{}
		for p := range files {
			if m, ok := FileModes()[path.Base(p)]; ok {
				d.FileModes[p] = fs.FileMode(m)
			}
		}
	}
	for _, p := range []string{userScript, operatorScript, LegacyUserDataFile} {
		if _, ok := files[p]; !ok {
			d.FileOps = append(d.FileOps, datasource.FileOp{Op: datasource.FileRemove, Path: p})
		}
	}
	d.FileOps = append(d.FileOps, datasource.FileOp{Op: datasource.FileRemove, Path: LegacyUserScriptLink})
	if _, ok := files[userScript]; ok {
		d.FileOps = append(d.FileOps, datasource.FileOp{Op: datasource.FileSymlink, Path: LegacyUserScriptLink, Target: userScript})
	}
	d.FileOps = append(d.FileOps, datasource.FileOp{Op: datasource.FileRename, Path: ProvisioningFile, Target: ProvisionSuccessFile})
	if md["network-data"] != nil {
		nc, err := ConvertNetwork(md["network-data"], md["dns_servers"], md["dns_domain"], md["routes"])
		if err != nil {
			return nil, err
		}
		d.NetworkConfig = nc
	}
	cfg := map[string]any{}
	if in.Mode == ModeKVM {
		cfg["disk_setup"] = map[string]any{
			"ephemeral0": map[string]any{"table_type": "mbr", "layout": false, "overwrite": false},
		}
		cfg["fs_setup"] = []any{
			map[string]any{"label": "ephemeral0", "filesystem": "ext4", "device": "ephemeral0"},
		}
	}
	if len(in.DiskAliases) > 0 {
		a := map[string]any{}
		for k, v := range in.DiskAliases {
			a[k] = v
		}
		cfg["device_aliases"] = a
	}
	if len(cfg) > 0 {
		d.Config = cfg
	}
	return d, nil
}

func text(v any) string {
	s, _ := v.(string)
	return s
}

// Shebang is the user-script as cloud-init writes it: plain text without
// a "#!" line gets "#!/bin/bash" put in front (cloud-init asks file(1)
// for text/plain; here: valid UTF-8 without NUL bytes).
func Shebang(b []byte) []byte {
	if len(b) == 0 || strings.HasPrefix(string(b), "#!") {
		return b
	}
	if !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		return b
	}
	return append([]byte("#!/bin/bash\n"), b...)
}

// VendorData is the default vendor-data: a boothook installing a per-boot
// script (perBootDir/01_smartos_vendor_data.sh) that runs the
// operator-script and then the user-script, each when it is executable.
func VendorData(perBootDir, operatorScript, userScript string) string {
	var b strings.Builder
	b.WriteString("#cloud-boothook\n#!/bin/sh\n")
	fmt.Fprintf(&b, "fname=\"%s/%s\"\n", perBootDir, PerBootVendorScript)
	b.WriteString("mkdir -p \"${fname%/*}\"\n")
	b.WriteString("cat > \"$fname\" <<\"END_SCRIPT\"\n#!/bin/sh\n##\n")
	// The header is cloud-init's, word for word: vendor-data.txt is an
	// output compared with cloud-init's.
	b.WriteString("# This file is written as part of the default vendor data for SmartOS.\n")
	b.WriteString("# The SmartOS datasource writes the listed file from the listed metadata key\n")
	fmt.Fprintf(&b, "#   sdc:operator-script -> %s\n", operatorScript)
	fmt.Fprintf(&b, "#   user-script -> %s\n#\n", userScript)
	b.WriteString("# You can view content with 'mdata-get <key>'\n#\n")
	fmt.Fprintf(&b, "for script in \"%s\" \"%s\"; do\n", operatorScript, userScript)
	b.WriteString("    [ -x \"$script\" ] || continue\n")
	b.WriteString("    echo \"executing '$script'\" 1>&2\n")
	b.WriteString("    \"$script\"\ndone\nEND_SCRIPT\nchmod +x \"$fname\"\n")
	return b.String()
}

// ConvertNetwork is cloud-init's convert_smartos_network_data: each
// sdc:nics entry is a physical interface named by its `interface`, with
// its `mac` as mac_address and its mtu; each of its `ips` is a subnet
// ("dhcp" → dhcp4, "addrconf" → dhcp6, else static with the address as
// given). The first IPv4 and the first IPv6 address of primary NICs get
// that NIC's first gateway of the same family; every sdc:routes entry
// (dst → network, gateway) is put on every static subnet. sdc:resolvers
// and sdc:dns_domain make a nameserver entry.
func ConvertNetwork(nics, dnsServers, dnsDomain, routes any) (map[string]any, error) {
	list, ok := nics.([]any)
	if !ok {
		return nil, fmt.Errorf("sdc:nics: expected a list, got %s", datasource.JSONKind(nics))
	}
	var servers, search []any
	if pyval.Truthy(dnsServers) {
		if l, ok := dnsServers.([]any); ok {
			servers = l
		} else {
			servers = []any{dnsServers}
		}
	}
	if pyval.Truthy(dnsDomain) {
		if l, ok := dnsDomain.([]any); ok {
			search = l
		} else {
			search = []any{dnsDomain}
		}
	}
	var rts []map[string]any
	if pyval.Truthy(routes) {
		l, ok := routes.([]any)
		if !ok {
			return nil, fmt.Errorf("sdc:routes: expected a list, got %s", datasource.JSONKind(routes))
		}
		for i, r := range l {
			m, ok := r.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("sdc:routes[%d]: expected an object, got %s", i, datasource.JSONKind(r))
			}
			if _, ok := m["dst"]; !ok {
				return nil, fmt.Errorf("sdc:routes[%d]: no dst", i)
			}
			rts = append(rts, m)
		}
	}
	physicalKeys := []string{"mac_address", "mtu", "name", "params", "subnets", "type"}
	subnetKeys := []string{"address", "broadcast", "dns_nameservers", "dns_search", "metric", "pointopoint", "routes", "scope", "type"}
	gw := map[bool]string{} // IPv4? → the primary gateway given out
	config := []any{}
	for i, n := range list {
		nic, ok := n.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("sdc:nics[%d]: expected an object, got %s", i, datasource.JSONKind(n))
		}
		name, ok := nic["interface"]
		if !ok {
			return nil, fmt.Errorf("sdc:nics[%d]: no interface", i)
		}
		cfg := pick(nic, physicalKeys)
		cfg["type"] = "physical"
		cfg["name"] = name
		if mac, ok := nic["mac"]; ok {
			cfg["mac_address"] = mac
		}
		var ips []any
		if v, ok := nic["ips"]; ok {
			if ips, ok = v.([]any); !ok {
				return nil, fmt.Errorf("sdc:nics[%d].ips: expected a list, got %s", i, datasource.JSONKind(v))
			}
		}
		subnets := []any{}
		for j, v := range ips {
			ip, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("sdc:nics[%d].ips[%d]: expected a string, got %s", i, j, datasource.JSONKind(v))
			}
			switch ip {
			case "dhcp":
				subnets = append(subnets, map[string]any{"type": "dhcp4"})
				continue
			case "addrconf":
				subnets = append(subnets, map[string]any{"type": "dhcp6"})
				continue
			}
			sub := pick(nic, subnetKeys)
			sub["type"] = "static"
			sub["address"] = ip
			v4 := strings.Contains(ip, ".")
			if pyval.Truthy(nic["primary"]) && gw[v4] == "" {
				gws, _ := nic["gateways"].([]any)
				for _, g := range gws {
					if s, ok := g.(string); ok && family(s, v4) {
						gw[v4] = s
						sub["gateway"] = s
						break
					}
				}
			}
			if len(rts) > 0 {
				ents := []any{}
				for _, r := range rts {
					rc := pick(r, []string{"network", "gateway"})
					rc["network"] = r["dst"]
					ents = append(ents, rc)
				}
				sub["routes"] = ents
			}
			subnets = append(subnets, sub)
		}
		cfg["subnets"] = subnets
		config = append(config, cfg)
	}
	if len(servers) > 0 {
		if search == nil {
			search = []any{}
		}
		config = append(config, map[string]any{"type": "nameserver", "address": servers, "search": search})
	}
	return map[string]any{"version": 1, "config": config}, nil
}

// family: cloud-init tells IPv4 from IPv6 by a dot or a colon.
func family(addr string, v4 bool) bool {
	if v4 {
		return strings.Contains(addr, ".")
	}
	return strings.Contains(addr, ":")
}

func pick(m map[string]any, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// IsTrue is cloud-init's util.is_true for a metadata value: "true", "1",
// "on" or "yes", in any case, surrounding white space ignored.
func IsTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "on", "yes":
		return true
	}
	return false
}
