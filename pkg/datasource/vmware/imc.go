package vmware

// VMware guest customization (IMC): the customization specification
// cust.cfg that the tools' deployPkg plugin unpacks into /var/run/vmware-imc
// (cloud-init's helpers/vmware/imc config.py, config_file.py and
// guestcust_util.py). The INI file itself is read by
// netconfig.ParseVMwareCustCfg, which also converts its NIC sections.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/netconfig"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// CustCfg is a parsed customization specification: the fields cloud-init's
// imc Config reads. The admin password is never kept, only whether one is
// set.
type CustCfg struct {
	// Raw is the whole file as "SECTION|key" → value.
	Raw netconfig.VMwareCustCfg

	HostName   string // [NETWORK] HOSTNAME
	DomainName string // [NETWORK] DOMAINNAME
	TimeZone   string // [DATETIME] TIMEZONE
	InstanceID string // [MISC] INSTANCE-ID
	MarkerID   string // [MISC] MARKER-ID
	// CustomScript is [CUSTOM-SCRIPT] SCRIPT-NAME.
	CustomScript string
	// HasPassword says [PASSWORD] -PASS is set.
	HasPassword bool
	// ResetPassword is [PASSWORD] RESET; PostGCStatus is [MISC]
	// POST-GC-STATUS; DefaultRunPostScript is [MISC]
	// DEFAULT-RUN-POST-CUST-SCRIPT (each yes or no, default no).
	ResetPassword, PostGCStatus, DefaultRunPostScript bool
	// MetaDataName and UserDataName are [CLOUDINIT] METADATA and USERDATA:
	// files beside cust.cfg holding cloud-init meta-data and user-data
	// ("raw data" customization).
	MetaDataName, UserDataName string
}

// Keys of cust.cfg (cloud-init's Config constants).
const (
	keyHostName       = "NETWORK|HOSTNAME"
	keyDomainName     = "NETWORK|DOMAINNAME"
	keyTimeZone       = "DATETIME|TIMEZONE"
	keyInstanceID     = "MISC|INSTANCE-ID"
	keyMarkerID       = "MISC|MARKER-ID"
	keyPostGCStatus   = "MISC|POST-GC-STATUS"
	keyDefaultRunPost = "MISC|DEFAULT-RUN-POST-CUST-SCRIPT"
	keyCustomScript   = "CUSTOM-SCRIPT|SCRIPT-NAME"
	keyPassword       = "PASSWORD|-PASS"
	keyResetPassword  = "PASSWORD|RESET"
	keyMetaData       = "CLOUDINIT|METADATA"
	keyUserData       = "CLOUDINIT|USERDATA"
)

// ParseCustCfg parses a cust.cfg. The yes/no options must be yes or no
// (any case), as cloud-init's Config properties insist.
func ParseCustCfg(b []byte) (*CustCfg, error) {
	raw, err := netconfig.ParseVMwareCustCfg(b)
	if err != nil {
		return nil, err
	}
	c := &CustCfg{
		Raw:          raw,
		HostName:     raw[keyHostName],
		DomainName:   raw[keyDomainName],
		TimeZone:     raw[keyTimeZone],
		InstanceID:   raw[keyInstanceID],
		MarkerID:     raw[keyMarkerID],
		CustomScript: raw[keyCustomScript],
		HasPassword:  raw[keyPassword] != "",
		MetaDataName: raw[keyMetaData],
		UserDataName: raw[keyUserData],
	}
	for _, o := range []struct {
		key string
		dst *bool
	}{
		{keyResetPassword, &c.ResetPassword},
		{keyPostGCStatus, &c.PostGCStatus},
		{keyDefaultRunPost, &c.DefaultRunPostScript},
	} {
		v, ok := raw[o.key]
		if !ok {
			continue
		}
		switch strings.ToLower(v) {
		case "yes":
			*o.dst = true
		case "no":
		default:
			sect, name, _ := strings.Cut(o.key, "|")
			return nil, fmt.Errorf("[%s] %s must be yes or no, not %q", sect, name, v)
		}
	}
	return c, nil
}

// RawData says this is a "raw data" (CloudinitPrep) customization, whose
// meta-data and user-data are files named by [CLOUDINIT]; otherwise it is
// a VMware (LinuxPrep) one.
func (c *CustCfg) RawData() bool { return c.MetaDataName != "" }

// MetaData is cloud-init's get_non_network_data_from_vmware_cust_cfg:
// local-hostname (HOSTNAME, with .DOMAINNAME when given) and instance-id;
// and the config object: timezone.
func (c *CustCfg) MetaData() (md, cfg map[string]any) {
	md, cfg = map[string]any{}, map[string]any{}
	if c.HostName != "" {
		if c.DomainName != "" {
			md["local-hostname"] = c.HostName + "." + c.DomainName
		} else {
			md["local-hostname"] = c.HostName
		}
	}
	if c.TimeZone != "" {
		cfg["timezone"] = c.TimeZone
	}
	if c.InstanceID != "" {
		md["instance-id"] = c.InstanceID
	}
	return md, cfg
}

// NetworkKey is the key of Data.NetworkConfig under which an IMC
// customization hands on its network part of cust.cfg (NIC-CONFIG, the NIC
// sections it lists and DNS, as "SECTION|key" → value) for
// netconfig.ConvertVMwareMap: NICs are named by their MAC on the machine,
// which only the network stage knows.
const NetworkKey = datasource.NetworkKeyVMware

// Network is the part of cust.cfg the network converter reads, keyed by
// NetworkKey. Other sections (the password above all) are left out.
func (c *CustCfg) Network() map[string]any {
	sections := map[string]bool{"NIC-CONFIG": true, "DNS": true}
	for _, s := range strings.Split(c.Raw["NIC-CONFIG|NICS"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			sections[s] = true
		}
	}
	out := map[string]any{}
	keys := make([]string, 0, len(c.Raw))
	for k := range c.Raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sect, _, _ := strings.Cut(k, "|"); sections[sect] && sect != "PASSWORD" {
			out[k] = c.Raw[k]
		}
	}
	return map[string]any{NetworkKey: out}
}

// CheckNetwork converts the NIC spec with the NICs named after their
// sections, to report a spec cloud-init would reject (no NIC-CONFIG, a NIC
// without MACADDR, two primary NICs, bad netmasks) before the network
// stage meets it.
func (c *CustCfg) CheckNetwork() error {
	_, err := netconfig.ConvertVMware(c.Raw, nil)
	return err
}
