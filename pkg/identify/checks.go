package identify

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// One function per datasource, each a dscheck_<Name> of ds-identify. They
// read only the Facts. The reason strings are cloudroot's; the log lines
// are ds-identify's.

// azureChassis is the asset tag every Azure VM carries.
const azureChassis = "7783-7084-3265-9085-8269-3286-77"

// ibmConfigUUID is the filesystem UUID of IBM Cloud's config-2 disk.
const ibmConfigUUID = "9796-932E"

// ovfEnvNamespace marks an OVF environment document.
const ovfEnvNamespace = "http://schemas.dmtf.org/ovf/environment/1"

func checkMAAS(*Facts) Check {
	return notFound("no check method; select MAAS with a single-entry datasource_list")
}

// configDriveV2 is check_configdrive_v2.
func configDriveV2(f *Facts) (bool, string) {
	for _, d := range []string{"config-drive", PathSeedDir + "/config_drive"} {
		ents, err := fs.ReadDir(f.files, d+"/openstack")
		if err != nil {
			continue
		}
		for _, e := range ents {
			if glob("2???-??-??", e.Name()) && isRegular(f.files, d+"/openstack/"+e.Name()+"/meta_data.json") {
				return true, "/" + d + "/openstack/" + e.Name() + "/meta_data.json"
			}
		}
	}
	if exists(f.files, PathSeedDir+"/config_drive/openstack/latest/meta_data.json") {
		f.debug(1, "config drive seeded directory had only 'latest'")
		return true, "seed config_drive/openstack/latest"
	}
	ibm := slices.Contains(f.dslist, "IBMCloud")
	f.debug(1, fmt.Sprintf("is_ds_enabled(IBMCloud) = %t.", ibm))
	if ibm && f.isIBMCloud() {
		return false, "the config-2 disk is IBMCloud's"
	}
	if f.HasLabel("CONFIG-2", "config-2") {
		return true, "filesystem label config-2"
	}
	return false, "no config drive"
}

func checkConfigDrive(f *Facts) Check {
	if ok, why := configDriveV2(f); ok {
		return found(why)
	} else {
		return notFound(why)
	}
}

func checkNoCloud(f *Facts) Check {
	if strings.Contains(" "+f.in.DMI.ProductSerial+" ", " ds=nocloud") {
		return found("DMI product_serial ds=nocloud")
	}
	for _, d := range []string{"nocloud", "nocloud-net"} {
		if f.seedDir(d, "meta-data", "user-data") {
			return found("seed " + d)
		}
		if isDir(f.files, "writable/system-data") &&
			seedDirIn(f.files, "writable/system-data/"+PathSeedDir+"/"+d, "meta-data", "user-data") {
			return found("seed /writable/system-data " + d)
		}
	}
	if f.HasLabel("cidata", "CIDATA") {
		return found("filesystem label cidata")
	}
	files := configFiles(f.files, "")
	if _, _, ok := checkConfig(f.files, "NoCloud", files); ok {
		if _, _, ok := checkConfig(f.files, "user-data", files); ok {
			if _, _, ok := checkConfig(f.files, "meta-data", files); ok {
				return found("NoCloud user-data and meta-data in cloud.cfg")
			}
		}
	}
	return notFound("no ds=nocloud serial, seed, cidata label or config")
}

func checkAltCloud(f *Facts) Check {
	ctype := f.in.DMI.ProductName
	if isRegular(f.files, "etc/sysconfig/cloud-info") {
		ctype, _ = readFirstLine(f.files, "etc/sysconfig/cloud-info")
	}
	switch {
	case strings.EqualFold(ctype, "rhev"):
		if !exists(f.host, "dev/floppy") {
			return notFound("RHEV without /dev/floppy")
		}
		return maybe("RHEV with /dev/floppy")
	case strings.EqualFold(ctype, "vsphere"):
		if !f.HasLabel("CDROM") {
			return notFound("VSPHERE without a CDROM label")
		}
		return maybe("VSPHERE with a CDROM label")
	}
	return notFound("cloud type is neither RHEV nor VSPHERE")
}

func checkAzure(f *Facts) Check {
	if f.dmi().assetTag == azureChassis {
		return found("DMI chassis_asset_tag is Azure's")
	}
	if f.seedDir("azure", "ovf-env.xml") {
		return found("seed azure/ovf-env.xml")
	}
	return notFound("no Azure asset tag or seed")
}

func checkBigstep(f *Facts) Check {
	if isRegular(f.files, "var/lib/cloud/data/seed/bigstep/url") {
		return found("/var/lib/cloud/data/seed/bigstep/url")
	}
	return notFound("no bigstep seed url")
}

func dmiIs(field, want, what string) Check {
	if field != "" && glob(want, field) {
		return found("DMI " + what + " " + field)
	}
	return notFound("DMI " + what + " is not " + want)
}

func checkCloudSigma(f *Facts) Check { return dmiIs(f.dmi().product, "CloudSigma", "product_name") }

func checkCloudStack(f *Facts) Check {
	if f.IsContainer() {
		return notFound("container")
	}
	return dmiIs(f.dmi().product, "CloudStack*", "product_name")
}

func checkDigitalOcean(f *Facts) Check { return dmiIs(f.dmi().vendor, "DigitalOcean", "sys_vendor") }

func checkVultr(f *Facts) Check {
	if f.dmi().vendor == "Vultr" {
		return found("DMI sys_vendor Vultr")
	}
	if f.cmdlineHasWord("vultr") {
		return found("vultr on the kernel command line")
	}
	if isRegular(f.files, "etc/vultr") {
		return found("/etc/vultr")
	}
	return notFound("no Vultr vendor, cmdline word or /etc/vultr")
}

func checkAliYun(f *Facts) Check {
	if f.seedDir("AliYun", "meta-data", "user-data") {
		return found("seed AliYun")
	}
	return dmiIs(f.dmi().product, "Alibaba Cloud ECS", "product_name")
}

func checkGCE(f *Facts) Check {
	d := f.dmi()
	if d.product == "Google Compute Engine" {
		return found("DMI product_name Google Compute Engine")
	}
	if glob("GoogleCloud-*", d.serial) {
		return found("DMI product_serial " + d.serial)
	}
	return notFound("no GCE product name or serial")
}

func checkOpenNebula(f *Facts) Check {
	// ds-identify requires meta-data here, which the OpenNebula datasource
	// never reads; a seed with context.sh (what it reads) counts too.
	if f.seedDir("opennebula") || f.seedDir("opennebula", "context.sh") {
		return found("seed opennebula")
	}
	if f.HasLabel("CONTEXT", "CDROM") {
		return found("filesystem label CONTEXT or CDROM")
	}
	return notFound("no opennebula seed or CONTEXT/CDROM label")
}

func checkOpenStack(f *Facts) Check {
	if ok, _ := configDriveV2(f); ok {
		return notFound("a config drive is present")
	}
	const nova, compute = "OpenStack Nova", "OpenStack Compute"
	d := f.dmi()
	if d.product == nova || d.product == compute {
		return found("DMI product_name " + d.product)
	}
	if f.pid1Name == nova {
		return found("PID 1 product_name " + nova)
	}
	switch d.assetTag {
	case "OpenTelekomCloud", "SAP CCloud VM", "HUAWEICLOUD", "Samsung Cloud Platform", nova, compute:
		return found("DMI chassis_asset_tag " + d.assetTag)
	}
	m := f.in.Uname.Machine
	if m == "x86_64" || glob("i?86", m) {
		return notFound("no OpenStack DMI on x86")
	}
	return maybe("non-x86 machine " + strconv.Quote(m) + " does not identify OpenStack")
}

func checkSmartOS(f *Facts) Check {
	if p := f.dmi().product; glob("SmartDC*", p) {
		return found("DMI product_name " + p)
	}
	if f.in.Uname.Version == "BrandZ virtual linux" && exists(f.host, "native/.zonecontrol/metadata.sock") {
		return found("LX brand zone with a metadata socket")
	}
	return notFound("no SmartDC product name or LX zone socket")
}

func checkScaleway(f *Facts) Check {
	if f.in.DMI.SysVendor == "Scaleway" {
		return found("DMI sys_vendor Scaleway")
	}
	if f.cmdlineHasWord("scaleway") {
		return found("scaleway on the kernel command line")
	}
	if isRegular(f.host, "var/run/scaleway") || isRegular(f.host, "run/scaleway") {
		return found("/var/run/scaleway")
	}
	return notFound("no Scaleway vendor, cmdline word or /var/run/scaleway")
}

func checkHetzner(f *Facts) Check { return dmiIs(f.dmi().vendor, "Hetzner", "sys_vendor") }

// ibmProvisioning is is_ibm_provisioning: the provisioning config exists
// and the install log, if any, was written during this boot (is newer than
// PID 1's environ).
func (f *Facts) ibmProvisioning() bool {
	const pcfg, logf = "root/provisioningConfiguration.cfg", "root/swinstall.log"
	if !isRegular(f.files, pcfg) {
		f.debug(2, "ibm_provisioning=false: config '/"+pcfg+"' did not exist.")
		return false
	}
	lfi, ok := stat(f.files, logf)
	if !ok || !lfi.Mode().IsRegular() {
		f.debug(2, "ibm_provisioning=true: config '/"+pcfg+"' exists. log '/"+logf+"' did not exist.")
		return true
	}
	efi, ok := stat(f.host, "proc/1/environ")
	if !ok || lfi.ModTime().After(efi.ModTime()) {
		f.debug(2, "ibm_provisioning=true: config '/"+pcfg+"' exists. log '/"+logf+"' from current boot.")
		return true
	}
	f.debug(2, "ibm_provisioning=false: config '/"+pcfg+"' exists. log '/"+logf+"' from previous boot.")
	return false
}

// isIBMCloud is is_ibm_cloud.
func (f *Facts) isIBMCloud() bool {
	if f.virt != "xen" {
		return false
	}
	return f.ibmProvisioning() || f.HasLabel("METADATA", "metadata") ||
		(f.HasUUID(ibmConfigUUID) && f.HasLabel("CONFIG-2", "config-2"))
}

func checkIBMCloud(f *Facts) Check {
	if f.ibmProvisioning() {
		f.debug(1, "cloud-init disabled during provisioning on IBMCloud")
		return notFound("IBMCloud is provisioning")
	}
	if f.isIBMCloud() {
		return found("xen with a METADATA disk or IBM's config-2 disk")
	}
	return notFound("not xen with an IBM metadata or config-2 disk")
}

func checkOracle(f *Facts) Check {
	return dmiIs(f.dmi().assetTag, "OracleCloud.com", "chassis_asset_tag")
}

func checkExoscale(f *Facts) Check { return dmiIs(f.dmi().product, "Exoscale*", "product_name") }

func checkRbxCloud(f *Facts) Check {
	if f.HasLabel("CLOUDMD", "cloudmd") {
		return found("filesystem label CLOUDMD")
	}
	return notFound("no CLOUDMD label")
}

func checkUpCloud(f *Facts) Check { return dmiIs(f.dmi().vendor, "UpCloud", "sys_vendor") }

func checkLXD(f *Facts) Check {
	if isSocket(f.host, "dev/lxd/sock") {
		return found("/dev/lxd/sock is a socket")
	}
	if f.virt != "kvm" && f.virt != "qemu" {
		return notFound("no /dev/lxd/sock and virt is not kvm or qemu")
	}
	ents, _ := fs.ReadDir(f.host, "sys/class/virtio-ports")
	for _, e := range ents {
		name, _ := readFirstLine(f.host, "sys/class/virtio-ports/"+e.Name()+"/name")
		if name == "com.canonical.lxd" || name == "org.linuxcontainers.lxd" {
			return found("virtio port " + name)
		}
	}
	return notFound("no LXD socket or virtio port")
}

func checkNWCS(f *Facts) Check { return dmiIs(f.dmi().vendor, "NWCS", "sys_vendor") }

func checkAkamai(f *Facts) Check {
	if v := f.dmi().vendor; v == "Linode" || v == "Akamai" {
		return found("DMI sys_vendor " + v)
	}
	return notFound("DMI sys_vendor is neither Linode nor Akamai")
}

func checkCloudCIX(f *Facts) Check { return dmiIs(f.dmi().product, "CloudCIX", "product_name") }

func checkWSL(f *Facts) Check {
	if f.in.Uname.Sysname != "Linux" {
		return notFound("kernel is not Linux")
	}
	if f.virt != "wsl" {
		return notFound("virt is not wsl")
	}
	mounts, _ := fs.ReadFile(f.host, "proc/mounts")
	var drvfs bool
	for _, line := range strings.Split(string(mounts), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 4 && fields[2] == "9p" && strings.Contains(fields[3], "aname=drvfs;") {
			drvfs = true
		}
	}
	if !drvfs {
		f.debug(1, "WSL datasource requires access to Windows drives mount points")
		return notFound("no Windows drive (9p drvfs) mounted")
	}
	profile := strings.Trim(f.in.Env["USERPROFILE"], "/")
	if profile == "" {
		return notFound("Windows user profile unknown (USERPROFILE)")
	}
	osr := parseOSRelease(f.files)
	instance := f.in.Env["WSL_DISTRO_NAME"]
	version := osr["VERSION_ID"]
	if version == "" {
		version = osr["VERSION_CODENAME"]
	}
	var names []string
	dir := profile + "/.cloud-init/"
	if instance != "" {
		names = append(names, dir+instance+".user-data")
	}
	if id := osr["ID"]; id != "" {
		if version != "" {
			names = append(names, dir+id+"-"+version+".user-data")
		}
		names = append(names, dir+id+"-all.user-data")
	}
	names = append(names, dir+"default.user-data")
	pro := profile + "/.ubuntupro/.cloud-init/"
	if instance != "" {
		names = append(names, pro+instance+".user-data")
	}
	names = append(names, pro+"agent.yaml")
	for _, n := range names {
		if isRegular(f.host, n) {
			return found("/" + n)
		}
	}
	return notFound("no user-data for this instance in the Windows profile")
}

// parseOSRelease reads etc/os-release's KEY=value lines (values unquoted).
func parseOSRelease(fsys fs.FS) map[string]string {
	m := map[string]string{}
	b, err := fs.ReadFile(fsys, "etc/os-release")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = unquote(v)
		}
	}
	return m
}
