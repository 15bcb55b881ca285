package identify

import "strings"

// Datasource is one entry of the registry: a cloud-init datasource name, a
// one-line statement of its ds-identify rule (docs/identify.md is generated
// from it), and its check.
type Datasource struct {
	Name string
	// Rule says, for people, what Detect looks at.
	Rule   string
	Detect func(f *Facts) Check
}

// Check is a datasource check's answer.
type Check struct {
	Verdict Verdict
	Reason  string
	// ExtraConfig is a cloud.cfg line to write when this datasource is
	// selected (Ec2's strict_id).
	ExtraConfig string
}

func found(reason string) Check    { return Check{Verdict: Found, Reason: reason} }
func maybe(reason string) Check    { return Check{Verdict: Maybe, Reason: reason} }
func notFound(reason string) Check { return Check{Verdict: NotFound, Reason: reason} }

// Datasources returns the registry in ds-identify's default order
// (DI_DSLIST_DEFAULT). Each call returns a new slice.
func Datasources() []Datasource {
	return []Datasource{
		{"MAAS", "no check (removed in ds-identify 26.1); MAAS images select it with a single-entry `datasource_list: [ MAAS ]`", checkMAAS},
		{"ConfigDrive", "`openstack/2???-??-??/meta_data.json` under `/config-drive` or seed `config_drive` (seed: also `openstack/latest`); else a filesystem labelled `config-2`/`CONFIG-2`, unless IBMCloud is listed and this is IBMCloud", checkConfigDrive},
		{"NoCloud", "DMI `product_serial` has a word starting `ds=nocloud`; seed `nocloud` or `nocloud-net` (also under `/writable/system-data`) with `meta-data` and `user-data`; label `cidata`/`CIDATA`; or `NoCloud:`, `user-data:` and `meta-data:` keys in cloud.cfg(.d)", checkNoCloud},
		{"AltCloud", "**maybe**: `/etc/sysconfig/cloud-info` (else DMI `product_name`) is RHEV with `/dev/floppy`, or VSPHERE with a `CDROM` label", checkAltCloud},
		{"Azure", "DMI `chassis_asset_tag` = `7783-7084-3265-9085-8269-3286-77`; or seed `azure/ovf-env.xml`", checkAzure},
		{"Bigstep", "file `/var/lib/cloud/data/seed/bigstep/url`", checkBigstep},
		{"CloudSigma", "DMI `product_name` = `CloudSigma`", checkCloudSigma},
		{"CloudStack", "not a container; DMI `product_name` matches `CloudStack*`", checkCloudStack},
		{"DigitalOcean", "DMI `sys_vendor` = `DigitalOcean`", checkDigitalOcean},
		{"Vultr", "DMI `sys_vendor` = `Vultr`; or the word `vultr` on the command line; or file `/etc/vultr`", checkVultr},
		{"AliYun", "seed `AliYun` with `meta-data` and `user-data`; or DMI `product_name` = `Alibaba Cloud ECS`", checkAliYun},
		{"Ec2", "seed `ec2` with `meta-data` and `user-data`; not a container; a known platform (AWS: `/sys/hypervisor/uuid` or DMI `product_uuid` starting `ec2`, either byte order; Brightbox: serial `*.brightbox.com`; ZStack: asset tag `*.zstack.io`; vendor `e24cloud`; Outscale: vendor `3DS Outscale` + product `3DS Outscale VM`); else `strict_id` (`ci.datasource.ec2.strict_id=`, cloud.cfg(.d `*ec2*`) or ds-identify.cfg; default true): true → not found, false/warn → **maybe** with `datasource: {Ec2: {strict_id: …}}`", checkEc2},
		{"GCE", "DMI `product_name` = `Google Compute Engine`; or `product_serial` matches `GoogleCloud-*`", checkGCE},
		{"OpenNebula", "seed `opennebula` with `meta-data` or `context.sh`; or label `CONTEXT`/`CDROM`", checkOpenNebula},
		{"OpenStack", "not found when a ConfigDrive v2 is present; DMI `product_name` `OpenStack Nova`/`OpenStack Compute`; PID 1 `product_name=OpenStack Nova`; asset tag `OpenTelekomCloud`, `SAP CCloud VM`, `HUAWEICLOUD`, `Samsung Cloud Platform`, `OpenStack Nova`, `OpenStack Compute`; otherwise **maybe** unless the machine is x86 (`i?86`, `x86_64`)", checkOpenStack},
		{"VMware", "env `VMX_GUESTINFO` with `VMX_GUESTINFO_METADATA`/`_USERDATA`/`_VENDORDATA`; or virt `vmware`, vmware-rpctool/vmtoolsd and a non-empty `guestinfo.metadata`/`userdata`/`vendordata`; or `libdeployPkgPlugin.so` installed and `disable_vmware_customization: false`", checkVMware},
		{"OVF", "seed `ovf/ovf-env.xml`; else virt is not `none`, not the Azure chassis, and guestinfo `ovfEnv` is XML or an iso9660 `/dev/sr[0-9]`/`/dev/hd[a-z]` is labelled `OVF-TRANSPORT`/`OVFENV`/`OVF ENV` (any case pair) or is < 10 MB and contains the OVF environment namespace", checkOVF},
		{"SmartOS", "DMI `product_name` matches `SmartDC*`; or uname version `BrandZ virtual linux` and `/native/.zonecontrol/metadata.sock` exists", checkSmartOS},
		{"Scaleway", "DMI `sys_vendor` = `Scaleway` (also in containers); the word `scaleway` on the command line; or file `/var/run/scaleway`", checkScaleway},
		{"Hetzner", "DMI `sys_vendor` = `Hetzner`", checkHetzner},
		{"IBMCloud", "not while provisioning (`/root/provisioningConfiguration.cfg` without a `/root/swinstall.log` older than PID 1); virt `xen` and label `METADATA`/`metadata`, or UUID `9796-932E` with label `config-2`/`CONFIG-2`", checkIBMCloud},
		{"Oracle", "DMI `chassis_asset_tag` = `OracleCloud.com`", checkOracle},
		{"Exoscale", "DMI `product_name` matches `Exoscale*`", checkExoscale},
		{"RbxCloud", "label `CLOUDMD`/`cloudmd`", checkRbxCloud},
		{"UpCloud", "DMI `sys_vendor` = `UpCloud`", checkUpCloud},
		{"LXD", "`/dev/lxd/sock` is a socket; or virt `kvm`/`qemu` and a `/sys/class/virtio-ports/*/name` of `com.canonical.lxd`/`org.linuxcontainers.lxd`", checkLXD},
		{"NWCS", "DMI `sys_vendor` = `NWCS`", checkNWCS},
		{"Akamai", "DMI `sys_vendor` = `Linode` or `Akamai`", checkAkamai},
		{"WSL", "uname `Linux`, virt `wsl`, a 9p `aname=drvfs` mount in `/proc/mounts`, and in `$USERPROFILE/.cloud-init` one of `<instance>.user-data`, `<ID>-<VERSION_ID or VERSION_CODENAME>.user-data`, `<ID>-all.user-data`, `default.user-data` (or `.ubuntupro/.cloud-init/{<instance>.user-data,agent.yaml}`)", checkWSL},
		{"CloudCIX", "DMI `product_name` = `CloudCIX`", checkCloudCIX},
	}
}

// DefaultList is ds-identify's DI_DSLIST_DEFAULT: the registry's names.
func DefaultList() []string {
	var names []string
	for _, d := range Datasources() {
		names = append(names, d.Name)
	}
	return names
}

func lookup(reg []Datasource, name string) (Datasource, bool) {
	for _, d := range reg {
		if d.Name == name {
			return d, true
		}
	}
	return Datasource{}, false
}

// alias maps spellings cloud-init accepts for a datasource, besides its
// name in any case, to the name.
func alias(low string) (string, bool) {
	switch low {
	case "nocloud-net", "nocloudnet":
		return "NoCloud", true
	case "joyent":
		return "SmartOS", true
	case "config-drive", "config_drive":
		return "ConfigDrive", true
	case "linode":
		return "Akamai", true
	}
	return "", false
}

// NormalizeName maps a datasource name as written on the command line
// (nocloud, ec2, nocloud-net) to cloud-init's spelling (NoCloud, Ec2). A
// name it does not know comes back unchanged.
func NormalizeName(name string) string {
	if name == "" {
		return ""
	}
	low := strings.ToLower(name)
	if low == "none" {
		return "None"
	}
	for _, d := range Datasources() {
		if strings.ToLower(d.Name) == low {
			return d.Name
		}
	}
	if a, ok := alias(low); ok {
		return a
	}
	return name
}
