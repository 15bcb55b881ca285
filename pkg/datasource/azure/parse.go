package azure

// Pure parsing: Data from what the provisioning media and IMDS said
// (cloud-init's crawl_metadata and read_azure_ovf).

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// DefaultInstanceID is cloud-init's DEFAULT_METADATA instance-id, used
// when neither DMI nor IMDS gives one.
const DefaultInstanceID = "iid-AZURE-NODE"

// ResourceDiskPath is where cloud-init's 66-azure-ephemeral.rules link the
// resource (ephemeral) disk; `ephemeral0` names it (disk_aliases).
const ResourceDiskPath = "/dev/disk/cloud/azure_resource"

// DefaultFS is the filesystem cloud-init puts on the resource disk.
const DefaultFS = "ext4"

// ErrPreprovisioned is a pre-provisioned (PPS) VM: the media and IMDS
// describe a pool VM waiting to be reused, which cloudroot does not
// handle (cloud-init reports ready, waits for the platform to hand the VM
// over, then reads /metadata/reprovisiondata).
var ErrPreprovisioned = errors.New("pre-provisioned VM (PPS) is not supported")

// Input is what Get read, for Build.
type Input struct {
	// OVF is the provisioning document, nil when none was found; OVFRaw
	// its bytes and OVFSource where it was read (a device path or a
	// directory).
	OVF       *OVFEnv
	OVFRaw    []byte
	OVFSource string
	// OVFDevice says OVFSource is a device (subplatform config-disk)
	// rather than a directory (seed-dir).
	OVFDevice bool
	// URL is the IMDS instance document's URL; Document its body, nil
	// when IMDS gave nothing.
	URL      string
	Document []byte
	// SystemUUID is DMI product_uuid; PreviousIID the instance-id an
	// earlier boot recorded (/var/lib/cloud/data/instance-id).
	SystemUUID  string
	PreviousIID string
	// RandomSeed is the platform's entropy (ACPI table OEM0), if any.
	RandomSeed []byte
	// ResourceDisk says the resource disk exists: the ephemeral disk
	// configuration is added, naming it ResourceDiskPath (or
	// ResourceDiskAlias when set).
	ResourceDisk      bool
	ResourceDiskAlias string
	// DataDir is the agent directory the document is kept in
	// (DefaultDataDir when empty).
	DataDir string
	// NoNetworkConfig is `apply_network_config: false`.
	NoNetworkConfig bool
	// Hash turns a plain password into a crypt(3) hash; nil means
	// target.HashPassword (SHA-512, random salt).
	Hash func(string) (string, error)

	// Set by Build: BadUserData when IMDS userData was not base64 (logged
	// and skipped, as cloud-init); Warnings for the log.
	BadUserData error
	Warnings    []string
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// ParseIMDS decodes the instance document.
func ParseIMDS(b []byte) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("not a JSON object")
	}
	return doc, nil
}

// Build turns what was read into Data.
func Build(in *Input) (*datasource.Data, error) {
	in.BadUserData, in.Warnings = nil, nil
	var doc map[string]any
	if in.Document != nil {
		var err error
		if doc, err = ParseIMDS(in.Document); err != nil {
			return nil, err
		}
	}
	if doc == nil && in.OVF == nil {
		return nil, errors.New("no OVF or IMDS available")
	}
	compute := obj(doc["compute"])
	if t := ppsType(in.OVF, doc); t != "" {
		return nil, fmt.Errorf("%w (type %s)", ErrPreprovisioned, t)
	}
	iid := instanceID(in.SystemUUID, in.PreviousIID)
	if iid == "" {
		iid = str(compute, "vmId")
	}
	if iid == "" {
		if doc != nil {
			return nil, errors.New("no compute.vmId (and no DMI system uuid)")
		}
		iid = DefaultInstanceID
	}

	d := &datasource.Data{
		NetworkUpdateEvents: NetworkUpdateEvents,
		Name:                "Azure",
		Platform:            "azure",
		CloudName:           "azure",
		Mode:                "net",
		AvailabilityZone:    str(compute, "platformFaultDomain"),
		Region:              str(compute, "location"),
	}
	switch {
	case in.OVF == nil:
		d.Subplatform = "imds (IMDS)"
	case in.OVFDevice:
		d.Subplatform = "config-disk (" + in.OVFSource + ")"
	default:
		d.Subplatform = "seed-dir (" + in.OVFSource + ")"
	}

	md := map[string]any{"local-hostname": ""}
	cfg := map[string]any{}
	defuser := map[string]any{}
	if in.OVF != nil {
		md = map[string]any{}
		var err error
		if cfg, defuser, err = ovfConfig(in.OVF, in.Hash); err != nil {
			return nil, err
		}
		if in.OVF.HostName != "" {
			md["local-hostname"] = in.OVF.HostName
		}
		if len(in.OVF.CustomData) > 0 {
			d.UserData = in.OVF.CustomData
		}
	}
	prof := obj(compute["osProfile"])
	if u := str(prof, "adminUsername"); u != "" {
		defuser["name"] = u
	}
	if len(defuser) > 0 {
		cfg["system_info"] = map[string]any{"default_user": defuser}
	}
	if h := str(prof, "computerName"); h != "" {
		md["local-hostname"] = h
	}
	if str(prof, "disablePasswordAuthentication") == "true" {
		md["disable_password"] = true
	}
	// As cloud-init: IMDS's disablePasswordAuthentication, when given,
	// decides ssh_pwauth over the OVF's.
	if v, ok := prof["disablePasswordAuthentication"]; ok {
		cfg["ssh_pwauth"] = fmt.Sprint(v) != "true"
	}
	if d.UserData == nil {
		if ud := str(compute, "userData"); ud != "" {
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(ud), ""))
			if err != nil {
				in.BadUserData = fmt.Errorf("compute.userData: %w", err)
			} else {
				d.UserData = b
			}
		}
	}
	md["imds"] = imdsMeta(doc, compute)
	if len(in.RandomSeed) > 0 {
		md["random_seed"] = base64.StdEncoding.EncodeToString(in.RandomSeed)
	}
	md["instance-id"] = iid

	if keys, ok := imdsKeys(compute); ok {
		d.PublicKeys = keys
	} else if in.OVF != nil {
		keys := in.ovfKeys()
		if len(keys) > 0 {
			d.PublicKeys = keys
			md["public-keys"] = keys
		}
	}
	d.MetaData = md

	if in.ResourceDisk {
		dev := in.ResourceDiskAlias
		if dev == "" {
			dev = ResourceDiskPath
		}
		for k, v := range EphemeralDiskConfig(dev) {
			if _, ok := cfg[k]; !ok {
				cfg[k] = v
			}
		}
	}
	if len(cfg) > 0 {
		d.Config = cfg
	}

	dir := in.DataDir
	if dir == "" {
		dir = DefaultDataDir
	}
	file := strings.TrimRight(dir, "/") + "/" + OVFFile
	switch {
	case in.OVF != nil && (in.OVFDevice || in.OVFSource != dir):
		red, err := RedactPassword(in.OVFRaw)
		if err != nil {
			return nil, fmt.Errorf("redacting the password of %s: %w", OVFFile, err)
		}
		d.Files = map[string][]byte{file: red}
		d.FileModes = map[string]fs.FileMode{file: 0o600}
	case in.OVF == nil:
		dis := "None"
		if v, ok := prof["disablePasswordAuthentication"]; ok {
			dis = "False"
			if v == "true" {
				dis = "True"
			}
		}
		d.Files = map[string][]byte{file: MinimalOVF(pyStr(prof, "adminUsername"), pyStr(prof, "computerName"), dis)}
		d.FileModes = map[string]fs.FileMode{file: 0o600}
	}

	if n := obj(doc["network"]); n != nil && !in.NoNetworkConfig {
		d.NetworkConfig = map[string]any{NetworkKey: n}
	}
	return d, nil
}

// ovfConfig is read_azure_ovf's configuration: the default user (name,
// password hashed), ssh_pwauth, the keys and the platform settings.
func ovfConfig(env *OVFEnv, hash func(string) (string, error)) (cfg, defuser map[string]any, err error) {
	cfg = map[string]any{}
	if len(env.PublicKeys) > 0 {
		keys := make([]any, len(env.PublicKeys))
		for i, k := range env.PublicKeys {
			keys[i] = map[string]any{"fingerprint": none(k.Fingerprint), "path": none(k.Path), "value": k.Value}
		}
		cfg["_pubkeys"] = keys
	}
	// DisableSshPasswordAuthentication is always a bool once parsed (an
	// absent one is false), so cloud-init always sets ssh_pwauth.
	cfg["ssh_pwauth"] = !env.DisableSSHPasswordAuth
	defuser = map[string]any{}
	if env.UserName != "" {
		defuser["name"] = env.UserName
	}
	if env.Password != "" {
		defuser["lock_passwd"] = false
		if string(env.Password) != PasswordRedaction {
			if hash == nil {
				hash = target.HashPassword
			}
			h, err := hash(string(env.Password))
			if err != nil {
				return nil, nil, fmt.Errorf("hashing UserPassword: %w", err)
			}
			defuser["hashed_passwd"] = h
		}
	}
	cfg["PreprovisionedVm"] = env.PreprovisionedVM
	cfg["PreprovisionedVMType"] = none(env.PreprovisionedVMType)
	cfg["ProvisionGuestProxyAgent"] = env.ProvisionGuestProxyAgent
	return cfg, defuser, nil
}

// pyStr is str(m.get(k)) as Python formats it: "None" when absent.
func pyStr(m map[string]any, k string) string {
	return pyval.Str(m[k])
}

// none is a string, or nil (cloud-init's None) when empty.
func none(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// EphemeralDiskConfig is cloud-init's BUILTIN_CLOUD_EPHEMERAL_DISK_CONFIG
// for the resource disk at dev: a GPT table with one partition, ext4 on
// it. cloud-init names the disk through its disk_aliases
// (ephemeral0 → dev); here device_aliases carries it, which disk_setup
// and mounts both resolve.
func EphemeralDiskConfig(dev string) map[string]any {
	return map[string]any{
		"device_aliases": map[string]any{"ephemeral0": dev},
		"disk_setup": map[string]any{
			"ephemeral0": map[string]any{"table_type": "gpt", "layout": []any{100}, "overwrite": true},
		},
		"fs_setup": []any{map[string]any{"filesystem": DefaultFS, "device": "ephemeral0.1"}},
	}
}

// imdsMeta is the document as meta-data's `imds`, without compute.userData
// (user-data is not meta-data); {} without IMDS.
func imdsMeta(doc, compute map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if _, ok := compute["userData"]; ok {
		c := make(map[string]any, len(compute))
		for k, v := range compute {
			if k != "userData" {
				c[k] = v
			}
		}
		out["compute"] = c
	}
	return out
}

// imdsKeys is _get_public_keys_from_imds: compute.publicKeys[].keyData,
// usable only when present and every key is in OpenSSH format.
func imdsKeys(compute map[string]any) ([]string, bool) {
	list, ok := compute["publicKeys"].([]any)
	if !ok {
		return nil, false
	}
	var out []string
	for _, k := range list {
		m := obj(k)
		data, ok := m["keyData"].(string)
		if !ok || !isOpenSSHKey(data) {
			return nil, false
		}
		out = append(out, strings.TrimSpace(data))
	}
	return out, true
}

// isOpenSSHKey is _key_is_openssh_formatted: one line (no CRLF inside)
// with a key type, possibly after options, followed by the key.
func isOpenSSHKey(k string) bool {
	k = strings.TrimSpace(k)
	if strings.Contains(k, "\r\n") {
		return false
	}
	f := strings.Fields(k)
	for i := 0; i < len(f)-1 && i < 2; i++ {
		t := f[i]
		if strings.HasPrefix(t, "ssh-") || strings.HasPrefix(t, "ecdsa-sha2-") || strings.HasPrefix(t, "sk-ssh-") || strings.HasPrefix(t, "sk-ecdsa-sha2-") {
			return true
		}
	}
	return false
}

// ovfKeys are the keys the wireserver negotiation returns for the OVF's
// PublicKey entries: those given by value. Keys given only by a
// certificate fingerprint need the wireserver's certificates, which are
// not fetched; they are reported in Warnings.
func (in *Input) ovfKeys() []string {
	var out []string
	for _, k := range in.OVF.PublicKeys {
		switch {
		case k.Value != "":
			out = append(out, k.Value)
		case k.Fingerprint != "":
			in.Warnings = append(in.Warnings, "ovf-env.xml PublicKey "+k.Fingerprint+" is given by certificate fingerprint only; fetching certificates from the wireserver is not supported")
		default:
			in.Warnings = append(in.Warnings, "ovf-env.xml PublicKey with neither value nor fingerprint")
		}
	}
	return out
}

// ppsType is _determine_pps_type without the reported-ready marker: ""
// for an ordinary VM.
func ppsType(ovf *OVFEnv, doc map[string]any) string {
	imdsType := str(obj(obj(doc["extended"])["compute"]), "ppsType")
	var ovfType string
	var ovfPPS bool
	if ovf != nil {
		ovfType, ovfPPS = ovf.PreprovisionedVMType, ovf.PreprovisionedVM
	}
	for _, t := range []string{"Savable", "PreprovisionedOSDisk"} {
		if ovfType == t || imdsType == t {
			return t
		}
	}
	if ovfPPS || ovfType == "Running" || imdsType == "Running" {
		return "Running"
	}
	return ""
}

// instanceID is cloud-init's _iid: the DMI system uuid in lower case, or
// the previous instance-id when it is that uuid in another case or
// byte-swapped (Gen1 VMs' SMBIOS 2.3 order); "" without a uuid.
func instanceID(system, previous string) string {
	system = strings.ToLower(strings.TrimSpace(system))
	if system == "" {
		return ""
	}
	if p := strings.ToLower(strings.TrimSpace(previous)); p != "" {
		if p == system || p == ByteSwapUUID(system) {
			return strings.TrimSpace(previous)
		}
	}
	return system
}

// ByteSwapUUID reverses the byte order of a UUID's first three fields
// (identity.byte_swap_system_uuid); a malformed UUID gives "".
func ByteSwapUUID(u string) string {
	parts := strings.Split(strings.ToLower(u), "-")
	if len(parts) != 5 || len(parts[0]) != 8 || len(parts[1]) != 4 || len(parts[2]) != 4 || len(parts[3]) != 4 || len(parts[4]) != 12 {
		return ""
	}
	for i, p := range parts {
		b, err := hex.DecodeString(p)
		if err != nil {
			return ""
		}
		if i < 3 {
			for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
				b[l], b[r] = b[r], b[l]
			}
		}
		parts[i] = hex.EncodeToString(b)
	}
	return strings.Join(parts, "-")
}
