package identify

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// The scenarios follow the behaviours cloud-init's
// tests/unittests/test_ds_identify.py checks, with fixtures of our own.
// Unless a scenario says otherwise: x86_64 Linux, virt "none", an EFI
// disk (vfat + ext4) and a cloud.cfg without datasource_list.

const (
	policyMaybeAll = "policy: search,found=all,maybe=all,notfound=disabled\n"
	ovfNS          = "http://schemas.dmtf.org/ovf/environment/1"
	awsUUID        = "EC23AEF5-54BE-4843-8D24-8C819F88453E"
	ibmUUID        = "9796-932E"
	azureTag       = "7783-7084-3265-9085-8269-3286-77"
	defaultCfg     = "# If you use datasource_list array, keep array items in a single line.\n" +
		"# datasource_list: [ Ec2 ]\nusers:\n  - default\ndisable_root: true\n"
)

var (
	unameX86    = Uname{Sysname: "Linux", Release: "6.1.0-18-amd64", Version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)", Machine: "x86_64"}
	unamePPC    = Uname{Sysname: "Linux", Release: "5.15.0", Version: "#106-Ubuntu SMP", Machine: "ppc64le"}
	unameARM64  = Uname{Sysname: "Linux", Release: "6.1.0-56-arm64", Version: "#1 SMP Debian 6.1.192-2 (2026-11-16)", Machine: "aarch64"}
	unameBrandZ = Uname{Sysname: "Linux", Release: "4.4.0", Version: "BrandZ virtual linux", Machine: "x86_64"}
	unameWSL    = Uname{Sysname: "Linux", Release: "5.15.133.1-microsoft-standard-WSL2", Version: "#1 SMP Thu Oct 5 21:02:42 UTC 2023", Machine: "x86_64"}
)

type scenario struct {
	name   string
	dmi    bootenv.DMI
	cmd    string
	fs     []FSInfo // appended to the EFI disk
	virt   string   // default "none"
	uname  *Uname
	files  fstest.MapFS
	env    map[string]string
	gi     map[string]string
	policy string // ds-identify.cfg content
	list   []string
	code   int
	cfg    string // exact cloud.cfg, when set
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s), Mode: 0o644} }

func files(kv ...string) fstest.MapFS {
	m := fstest.MapFS{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = file(kv[i+1])
	}
	return m
}

func socket() *fstest.MapFile { return &fstest.MapFile{Mode: fs.ModeSocket | 0o666} }

func dev(name, typ, label string) FSInfo {
	return FSInfo{Device: "/dev/" + name, Type: typ, Label: label, Size: 1 << 20}
}

func efiDisk() []FSInfo {
	return []FSInfo{
		{Device: "/dev/sda1", Type: "vfat", UUID: "8B36-5390", Size: 512 << 20},
		{Device: "/dev/sda2", Type: "ext4", UUID: "19ac97d5-6973-4193-9a09-2e6bbfa38262", Size: 8 << 30},
	}
}

func (s scenario) inputs() Inputs {
	fsys := fstest.MapFS{PathCloudCfg: file(defaultCfg)}
	for k, v := range s.files {
		fsys[k] = v
	}
	if s.policy != "" {
		fsys[PathDIConfig] = file(s.policy)
	}
	in := Inputs{
		DMI:       s.dmi,
		Cmdline:   bootenv.ParseCmdline(s.cmd),
		FS:        append(efiDisk(), s.fs...),
		Virt:      s.virt,
		Uname:     unameX86,
		Files:     fsys,
		Env:       s.env,
		Guestinfo: s.gi,
	}
	if _, ok := s.env["SYSTEMD_VIRTUALIZATION"]; !ok && in.Virt == "" {
		in.Virt = "none"
	}
	if s.uname != nil {
		in.Uname = *s.uname
	}
	return in
}

func list(names ...string) []string { return names }

func scenarios() []scenario {
	seedNoCloud := files(PathSeedDir+"/nocloud/meta-data", "md\n", PathSeedDir+"/nocloud/user-data", "ud\n")
	seedConfigDrive := files(PathSeedDir+"/config_drive/openstack/latest/meta_data.json", "{}\n")
	ibmConfig2 := []FSInfo{
		{Device: "/dev/xvda1", Type: "ext3", Label: "cloudimg-bootfs", UUID: "1d2b-uuid"},
		{Device: "/dev/xvdb", Type: "vfat", Label: "config-2", UUID: ibmUUID},
	}
	merge := func(ms ...fstest.MapFS) fstest.MapFS {
		out := fstest.MapFS{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	vmtools := func(path string) fstest.MapFS {
		return files(path, "plugin", PathCloudCfg, "disable_vmware_customization: false\n")
	}
	wslMounts := "/dev/sdd / ext4 rw,errors=remount-ro,data=ordered 0 0\n" +
		"C:\\134 /mnt/c 9p rw,dirsync,aname=drvfs;path=C:\\;uid=0;gid=0;symlinkroot=/mnt/ 0 0\n"
	wslEnv := map[string]string{"USERPROFILE": "/mnt/c/Users/me", "WSL_DISTRO_NAME": "Noble-Dev"}
	wsl := func(userFile string, osRelease string) fstest.MapFS {
		m := files("proc/mounts", wslMounts, "etc/os-release", osRelease)
		if userFile != "" {
			m["mnt/c/Users/me/"+userFile] = file("#cloud-config\n")
		}
		return m
	}
	ubuntuOSR := "NAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nVERSION_CODENAME=noble\nID=ubuntu\n"
	debianOSR := "NAME=\"Debian GNU/Linux\"\nVERSION_CODENAME=\"trixie\"\nID=debian\n"
	ovfCD := func(label, content string, size int64) ([]FSInfo, fstest.MapFS) {
		return []FSInfo{{Device: "/dev/sr0", Type: "iso9660", Label: label, Size: size}},
			files("dev/sr0", content)
	}
	ovfFS, ovfFiles := ovfCD("", "an iso with "+ovfNS+" inside\n", 1<<20)
	ovfBigFS, _ := ovfCD("", "", 10<<20)
	ovf9FS, _ := ovfCD("", "", 9<<20)
	ovfNoMatchFS, ovfNoMatchFiles := ovfCD("", "no content match\n", 1<<20)
	ovfLabelFS, _ := ovfCD("OVF ENV", "", 1<<20)
	provisioning := func(logAge time.Duration) fstest.MapFS {
		boot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		return fstest.MapFS{
			"root/provisioningConfiguration.cfg": &fstest.MapFile{Data: []byte("k=v\n"), ModTime: boot.Add(-10 * time.Second)},
			"root/swinstall.log":                 &fstest.MapFile{Data: []byte("log\n"), ModTime: boot.Add(logAge)},
			"proc/1/environ":                     &fstest.MapFile{Data: []byte("PWD=/\x00"), ModTime: boot},
		}
	}

	return []scenario{
		// Disabled before anything else.
		{name: "cmdline-disabled", cmd: "ro quiet cloud-init=disabled", files: seedNoCloud, code: 2},
		{name: "marker-file-disabled", files: merge(seedNoCloud, files(PathDisabledMarker, "")), code: 2},
		{name: "env-disabled", env: map[string]string{"KERNEL_CMDLINE": "cloud-init=disabled"}, files: seedNoCloud, code: 2},
		{name: "cmdline-enabled-is-not-disabled", cmd: "cloud-init=enabled", files: seedNoCloud, list: list("NoCloud", "None")},

		// Policy.
		{name: "policy-disabled-config", dmi: bootenv.DMI{ProductUUID: awsUUID}, policy: "policy: disabled\n", code: 1},
		{name: "policy-disabled-cmdline", dmi: bootenv.DMI{ProductUUID: awsUUID}, cmd: "ci.di.policy=disabled", code: 1},
		{name: "policy-enabled-writes-nothing", policy: "policy: enabled\n", code: 0},
		{name: "policy-cmdline-overrides-config", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, policy: "policy: disabled\n", cmd: "ci.di.policy=search", list: list("GCE", "None")},
		{name: "policy-report-found", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, policy: "policy: report\n", list: list("GCE", "None"),
			cfg: "di_report:\n  datasource_list: [ GCE, None ]\n"},
		{name: "policy-report-notfound", policy: "policy: report,notfound=disabled\n", code: 0, cfg: "di_report:\n  datasource_list: [  ]\n"},
		{name: "notfound-disabled-default", code: 1,
			cfg: "di_report:\n  datasource_list: [  ]\n  # reporting not found result. notfound=disabled.\n"},
		{name: "notfound-enabled", policy: "policy: search,notfound=enabled\n", code: 0,
			cfg: "di_report:\n  datasource_list: [  ]\n  # reporting not found result. notfound=enabled.\n"},
		{name: "found-all", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, fs: []FSInfo{dev("vdb", "iso9660", "cidata")}, list: list("NoCloud", "GCE", "None")},
		{name: "found-first", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, fs: []FSInfo{dev("vdb", "iso9660", "cidata")},
			policy: "policy: search,found=first\n", list: list("NoCloud", "None")},
		{name: "policy-bad-value-uses-default", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, policy: "policy: search,found=most\n", list: list("GCE", "None")},
		{name: "maybe-all-openstack-ppc64", uname: &unamePPC, virt: "kvm", policy: policyMaybeAll, list: list("OpenStack", "None")},
		{name: "maybe-none-openstack-ppc64", uname: &unamePPC, virt: "kvm", code: 1},
		{name: "found-beats-maybe", uname: &unamePPC, virt: "kvm", policy: policyMaybeAll, files: seedNoCloud, list: list("NoCloud", "None")},

		// Named datasource.
		{name: "ds-nocloud-normalised", cmd: "ro ds=nocloud;s=http://10.0.0.1/seed/", list: list("NoCloud", "None"), cfg: "datasource_list: [ NoCloud, None ]\n"},
		{name: "ci.ds-ec2", cmd: "ci.ds=ec2", list: list("Ec2", "None")},
		{name: "ci.datasource-nocloud-net", cmd: "ci.datasource=nocloud-net;h=host", list: list("NoCloud", "None")},
		{name: "di-cfg-datasource", policy: "datasource: Ec2\n", list: list("Ec2", "None")},
		{name: "cmdline-ds-beats-di-cfg", policy: "datasource: Ec2\n", cmd: "ds=GCE", list: list("GCE", "None")},
		{name: "ds-unknown-kept", cmd: "ds=MyCloud", list: list("MyCloud", "None")},
		{name: "manual-clean", files: merge(seedNoCloud, files(PathManualClean, "")), code: 0, cfg: "# manual_cache_clean.\n"},

		// datasource_list.
		{name: "single-entry-no-none", dmi: bootenv.DMI{ProductUUID: awsUUID}, files: files(PathCloudCfgD+"/myds.cfg", "datasource_list: [\"NoCloud\"]\n"), list: list("NoCloud"),
			cfg: "datasource_list: [ NoCloud ]\n"},
		{name: "list-with-none-kept", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, files: files(PathCloudCfgD+"/myds.cfg", "datasource_list: [\"Ec2\", \"None\"]\n"), list: list("Ec2", "None")},
		{name: "cmdline-cc-list", cmd: "ro cc: datasource_list: [ 'GCE' ] end_cc", list: list("GCE")},
		{name: "multiline-list-ignored", dmi: bootenv.DMI{ChassisAssetTag: azureTag}, files: files(PathCloudCfgD+"/91-azure.cfg", "datasource_list:\n   - Azure\n"), list: list("Azure", "None")},
		{name: "cfg-d-last-wins", dmi: bootenv.DMI{ProductName: "Google Compute Engine"},
			files: files(PathCloudCfg, "datasource_list: [ NoCloud ]\n", PathCloudCfgD+"/90.cfg", "datasource_list: [ Ec2, GCE ] # comment\n"), list: list("GCE", "None")},
		{name: "list-limits-search", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, files: files(PathCloudCfgD+"/90.cfg", "datasource_list: [ Ec2, NoCloud ]\n"), code: 1},
		{name: "list-unknown-entry-skipped", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, files: files(PathCloudCfgD+"/90.cfg", "datasource_list: [ Foo, GCE ]\n"), list: list("GCE", "None")},

		// MAAS: no check; selected by a single-entry list only.
		{name: "maas-single-entry", files: files(PathCloudCfgD+"/90_maas.cfg", "datasource_list: [ MAAS ]\n"), list: list("MAAS")},
		{name: "maas-key-not-detected-nested", virt: "kvm",
			files: files(PathCloudCfgD+"/92-broken-maas.cfg", "datasource:\n MAAS:\n metadata_urls: [ 'blah.com' ]\n", "sys/class/virtio-ports/vport1p1/name", "com.canonical.lxd\n"), list: list("LXD", "None")},
		{name: "maas-key-not-detected-top", virt: "kvm",
			files: files(PathCloudCfgD+"/92-broken-maas.cfg", "MAAS: None\n", "sys/class/virtio-ports/vport1p1/name", "com.canonical.lxd\n"), list: list("LXD", "None")},

		// ConfigDrive.
		{name: "configdrive-label", fs: []FSInfo{dev("vdb", "vfat", "config-2")}, list: list("ConfigDrive", "None")},
		{name: "configdrive-label-upper", fs: []FSInfo{dev("vdb", "vfat", "CONFIG-2")}, list: list("ConfigDrive", "None")},
		{name: "configdrive-seed-latest", files: seedConfigDrive, list: list("ConfigDrive", "None")},
		{name: "configdrive-seed-dated", files: files(PathSeedDir+"/config_drive/openstack/2015-10-15/meta_data.json", "{}"), list: list("ConfigDrive", "None")},
		{name: "configdrive-dir", files: files("config-drive/openstack/2012-08-10/meta_data.json", "{}"), list: list("ConfigDrive", "None")},
		{name: "configdrive-negative", fs: []FSInfo{dev("vdb", "vfat", "config-3")}, files: files("config-drive/openstack/latest/meta_data.json", "{}"), code: 1},
		{name: "configdrive-yields-to-ibmcloud", virt: "xen", fs: ibmConfig2,
			files: files(PathCloudCfgD+"/99_networklayer_common.cfg", "datasource_list: [ ConfigDrive, IBMCloud ]\n"), list: list("IBMCloud", "None")},
		{name: "configdrive-claims-ibm-disk", virt: "xen", fs: ibmConfig2,
			files: files(PathCloudCfgD+"/99_networklayer_common.cfg", "datasource_list: [ ConfigDrive, NoCloud ]\n"), list: list("ConfigDrive", "None")},

		// NoCloud.
		{name: "nocloud-iso-vdb", virt: "kvm", fs: []FSInfo{dev("vdb", "iso9660", "cidata")}, list: list("NoCloud", "None")},
		{name: "nocloud-upper", virt: "kvm", fs: []FSInfo{dev("vdb", "iso9660", "CIDATA")}, list: list("NoCloud", "None")},
		{name: "nocloud-vfat", virt: "xen", fs: []FSInfo{{Device: "/dev/xvdb", Type: "vfat", UUID: "355a-4FC2", Label: "cidata"}}, list: list("NoCloud", "None")},
		{name: "nocloud-seed", files: seedNoCloud, list: list("NoCloud", "None")},
		{name: "nocloud-net-seed", files: files(PathSeedDir+"/nocloud-net/meta-data", "", PathSeedDir+"/nocloud-net/user-data", ""), list: list("NoCloud", "None")},
		{name: "nocloud-ubuntu-core-writable", files: files("writable/system-data/"+PathSeedDir+"/nocloud-net/meta-data", "md", "writable/system-data/"+PathSeedDir+"/nocloud-net/user-data", "ud"), list: list("NoCloud", "None")},
		{name: "nocloud-in-cloud-cfg", files: files(PathCloudCfg, "datasource_list: [ Azure, OpenStack, NoCloud, None ]\ndatasource:\n  NoCloud:\n    user-data: |\n      #cloud-config\n    meta-data: |\n      instance-id: x\n"),
			list: list("NoCloud", "None")},
		{name: "nocloud-dmi-serial", dmi: bootenv.DMI{ProductSerial: "ds=nocloud;s=http://10.0.2.2:8000/"}, list: list("NoCloud", "None")},
		{name: "nocloud-seed-incomplete", files: files(PathSeedDir+"/nocloud/meta-data", "md"), code: 1},
		{name: "nocloud-wrong-label", fs: []FSInfo{dev("vdb", "iso9660", "cidata2")}, code: 1},

		// AltCloud (maybe only).
		{name: "altcloud-rhev-floppy", dmi: bootenv.DMI{ProductName: "RHEV Hypervisor"}, files: files("etc/sysconfig/cloud-info", "rhev\n", "dev/floppy", ""), policy: policyMaybeAll, list: list("AltCloud", "None")},
		{name: "altcloud-vsphere-cdrom", fs: []FSInfo{dev("sr0", "iso9660", "CDROM")}, files: files("etc/sysconfig/cloud-info", "VSPHERE\n", PathCloudCfgD+"/90.cfg", "datasource_list: [ AltCloud, GCE ]\n"),
			policy: policyMaybeAll, list: list("AltCloud", "None")},
		{name: "altcloud-rhev-no-floppy", dmi: bootenv.DMI{ProductName: "RHEV"}, policy: policyMaybeAll, code: 1},
		{name: "altcloud-maybe-ignored-by-default", files: files("etc/sysconfig/cloud-info", "rhev\n", "dev/floppy", ""), code: 1},

		// Azure.
		{name: "azure-dmi", dmi: bootenv.DMI{ChassisAssetTag: azureTag}, list: list("Azure", "None")},
		{name: "azure-seed", dmi: bootenv.DMI{ChassisAssetTag: "No-match"}, files: files(PathSeedDir+"/azure/ovf-env.xml", "present\n"), list: list("Azure", "None")},
		{name: "azure-negative", dmi: bootenv.DMI{ChassisAssetTag: "7783-7084"}, code: 1},

		// Bigstep.
		{name: "bigstep", files: files("var/lib/cloud/data/seed/bigstep/url", "http://x/\n"), list: list("Bigstep", "None")},
		{name: "bigstep-negative", files: files("var/lib/cloud/data/seed/bigstep/url/x", ""), code: 1},

		// CloudSigma, CloudStack, DigitalOcean.
		{name: "cloudsigma", dmi: bootenv.DMI{ProductName: "CloudSigma"}, list: list("CloudSigma", "None")},
		{name: "cloudsigma-negative", dmi: bootenv.DMI{ProductName: "CloudSigma VM"}, code: 1},
		{name: "cloudstack", dmi: bootenv.DMI{ProductName: "CloudStack KVM Hypervisor"}, list: list("CloudStack", "None")},
		{name: "cloudstack-container", virt: "lxc", dmi: bootenv.DMI{ProductName: "CloudStack KVM Hypervisor"}, code: 1},
		{name: "digitalocean", dmi: bootenv.DMI{SysVendor: "DigitalOcean"}, list: list("DigitalOcean", "None")},
		{name: "digitalocean-container", virt: "docker", dmi: bootenv.DMI{SysVendor: "DigitalOcean"}, code: 1},

		// Vultr.
		{name: "vultr-dmi", dmi: bootenv.DMI{SysVendor: "Vultr"}, list: list("Vultr", "None")},
		{name: "vultr-cmdline", cmd: "ro vultr console=ttyS0", list: list("Vultr", "None")},
		{name: "vultr-etc", files: files("etc/vultr", ""), list: list("Vultr", "None")},
		{name: "vultr-negative", cmd: "ro vultrx novultr", code: 1},

		// AliYun.
		{name: "aliyun-dmi", dmi: bootenv.DMI{ProductName: "Alibaba Cloud ECS"}, list: list("AliYun", "None")},
		{name: "aliyun-seed", files: files(PathSeedDir+"/AliYun/meta-data", "", PathSeedDir+"/AliYun/user-data", ""), list: list("AliYun", "None")},
		{name: "aliyun-over-ec2-found-first", virt: "xen", dmi: bootenv.DMI{ProductName: "Alibaba Cloud ECS"}, files: files("sys/hypervisor/uuid", "ec2c6e2f-5fac-4fc7-9c82-74127ec14bbb\n"),
			policy: "policy: search,found=first,maybe=none,notfound=disabled\n", list: list("AliYun", "None")},

		// Ec2.
		{name: "ec2-hvm", virt: "kvm", dmi: bootenv.DMI{ProductSerial: "ec23aef5-54be-4843-8d24-8c819f88453e", ProductUUID: awsUUID}, list: list("Ec2", "None")},
		{name: "ec2-uuid-byteswapped", virt: "kvm", dmi: bootenv.DMI{ProductUUID: "45E12AEC-DCD1-B213-94ED-012345ABCDEF"}, list: list("Ec2", "None")},
		{name: "ec2-xen-hypervisor-uuid", virt: "xen", files: files("sys/hypervisor/uuid", "ec2c6e2f-5fac-4fc7-9c82-74127ec14bbb\n"), list: list("Ec2", "None")},
		{name: "ec2-brightbox", dmi: bootenv.DMI{ProductSerial: "srv-otuxg.gb1.brightbox.com"}, list: list("Ec2", "None")},
		{name: "ec2-brightbox-negative", dmi: bootenv.DMI{ProductSerial: "tricky-host.bobrightbox.com.example"}, code: 1},
		{name: "ec2-zstack", dmi: bootenv.DMI{ChassisAssetTag: "123456.zstack.io"}, list: list("Ec2", "None")},
		{name: "ec2-e24cloud", dmi: bootenv.DMI{SysVendor: "e24cloud"}, list: list("Ec2", "None")},
		{name: "ec2-e24cloud-negative", dmi: bootenv.DMI{SysVendor: "e24cloudyday"}, code: 1},
		{name: "ec2-outscale", dmi: bootenv.DMI{ProductName: "3DS Outscale VM", SysVendor: "3DS Outscale"}, list: list("Ec2", "None")},
		{name: "ec2-outscale-negative-vendor", dmi: bootenv.DMI{ProductName: "3DS Outscale VM", SysVendor: "Not 3DS Outscale"}, code: 1},
		{name: "ec2-outscale-negative-product", dmi: bootenv.DMI{ProductName: "Not 3DS Outscale VM", SysVendor: "3DS Outscale"}, code: 1},
		{name: "ec2-seed", files: files(PathSeedDir+"/ec2/meta-data", "", PathSeedDir+"/ec2/user-data", ""), list: list("Ec2", "None")},
		{name: "ec2-strict-false-cmdline", cmd: "ci.datasource.ec2.strict_id=false", policy: policyMaybeAll, list: list("Ec2", "None"),
			cfg: "datasource_list: [ Ec2, None ]\ndatasource: {Ec2: {strict_id: \"false\"}}\n"},
		{name: "ec2-strict-warn-cfg-d", files: files(PathCloudCfgD+"/99-EC2.cfg", "datasource:\n  Ec2:\n    strict_id: warn\n"), policy: policyMaybeAll, list: list("Ec2", "None"),
			cfg: "datasource_list: [ Ec2, None ]\ndatasource: {Ec2: {strict_id: \"warn\"}}\n"},
		{name: "ec2-strict-not-in-other-cfg-d", files: files(PathCloudCfgD+"/99-other.cfg", "strict_id: false\n"), policy: policyMaybeAll, code: 1},
		{name: "ec2-strict-di-cfg", policy: policyMaybeAll + "ci.datasource.ec2.strict_id: warn,10\n", list: list("Ec2", "None"),
			cfg: "datasource_list: [ Ec2, None ]\ndatasource: {Ec2: {strict_id: \"warn,10\"}}\n"},
		{name: "ec2-strict-invalid", cmd: "ci.datasource.ec2.strict_id=bogus", policy: policyMaybeAll, code: 1},
		{name: "ec2-container", virt: "lxc", dmi: bootenv.DMI{ProductUUID: awsUUID}, code: 1},

		// GCE.
		{name: "gce-product", virt: "kvm", dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, list: list("GCE", "None")},
		{name: "gce-env-virt", env: map[string]string{"SYSTEMD_VIRTUALIZATION": "vm:kvm"}, dmi: bootenv.DMI{ProductName: "Google Compute Engine"}, list: list("GCE", "None")},
		{name: "gce-serial", virt: "kvm", dmi: bootenv.DMI{ProductSerial: "GoogleCloud-8f2e88f"}, list: list("GCE", "None")},
		{name: "gce-negative", virt: "kvm", dmi: bootenv.DMI{ProductName: "Google"}, code: 1},

		// OpenNebula.
		{name: "opennebula-context", fs: []FSInfo{dev("sr0", "iso9660", "CONTEXT")}, list: list("OpenNebula", "None")},
		{name: "opennebula-seed", files: files(PathSeedDir+"/opennebula/meta-data", ""), list: list("OpenNebula", "None")},
		// ds-identify wants meta-data; cloudroot also takes the context.sh the datasource reads.
		{name: "opennebula-seed-context", files: files(PathSeedDir+"/opennebula/context.sh", ""), list: list("OpenNebula", "None")},
		{name: "opennebula-negative", files: files(PathSeedDir+"/opennebula/user-data", ""), code: 1},

		// OpenStack.
		{name: "openstack-nova", virt: "kvm", dmi: bootenv.DMI{ProductName: "OpenStack Nova"}, list: list("OpenStack", "None")},
		{name: "openstack-compute", virt: "kvm", dmi: bootenv.DMI{ProductName: "OpenStack Compute"}, list: list("OpenStack", "None")},
		{name: "openstack-open-telekom", virt: "xen", dmi: bootenv.DMI{ChassisAssetTag: "OpenTelekomCloud"}, list: list("OpenStack", "None")},
		{name: "openstack-sap-ccloud", virt: "vmware", dmi: bootenv.DMI{ChassisAssetTag: "SAP CCloud VM"}, list: list("OpenStack", "None")},
		{name: "openstack-huawei", virt: "kvm", dmi: bootenv.DMI{ChassisAssetTag: "HUAWEICLOUD"}, list: list("OpenStack", "None")},
		{name: "openstack-samsung", virt: "kvm", dmi: bootenv.DMI{ChassisAssetTag: "Samsung Cloud Platform"}, list: list("OpenStack", "None")},
		{name: "openstack-asset-tag-nova", virt: "xen", dmi: bootenv.DMI{ChassisAssetTag: "OpenStack Nova"}, list: list("OpenStack", "None")},
		{name: "openstack-asset-tag-compute", virt: "xen", dmi: bootenv.DMI{ChassisAssetTag: "OpenStack Compute"}, list: list("OpenStack", "None")},
		{name: "openstack-pid1-env", virt: "kvm", files: files("proc/1/environ", "HOME=/\x00product_name=OpenStack Nova\x00"), list: list("OpenStack", "None")},
		{name: "openstack-intel-needs-dmi", virt: "kvm", policy: policyMaybeAll, code: 1},
		{name: "openstack-not-with-config-drive", virt: "kvm", dmi: bootenv.DMI{ProductName: "OpenStack Nova"}, fs: []FSInfo{dev("vdb", "vfat", "config-2")}, list: list("ConfigDrive", "None")},

		// VMware.
		{name: "vmware-env-metadata", env: map[string]string{"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": "e30="}, virt: "vmware", list: list("VMware", "None")},
		{name: "vmware-env-userdata", env: map[string]string{"VMX_GUESTINFO": "1", "VMX_GUESTINFO_USERDATA": "x"}, virt: "vmware", list: list("VMware", "None")},
		{name: "vmware-env-vendordata", env: map[string]string{"VMX_GUESTINFO": "1", "VMX_GUESTINFO_VENDORDATA": "x"}, virt: "vmware", list: list("VMware", "None")},
		{name: "vmware-env-no-data", env: map[string]string{"VMX_GUESTINFO": "1"}, virt: "vmware", code: 1},
		{name: "vmware-env-no-virt-id", env: map[string]string{"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": "x"}, list: list("VMware", "None")},
		{name: "vmware-guestinfo-metadata", virt: "vmware", gi: map[string]string{"metadata": "instance-id: vm-1"}, list: list("VMware", "None")},
		{name: "vmware-guestinfo-userdata", virt: "vmware", gi: map[string]string{"userdata": "---\n#cloud-config"}, list: list("VMware", "None")},
		{name: "vmware-guestinfo-vendordata", virt: "vmware", gi: map[string]string{"vendordata": "---\nx: 1"}, list: list("VMware", "None")},
		{name: "vmware-guestinfo-no-data", virt: "vmware", gi: map[string]string{"metadata": "  \n"}, code: 1},
		{name: "vmware-guestinfo-no-virt-id", gi: map[string]string{"metadata": "instance-id: vm-1"}, code: 1},
		{name: "vmware-no-transports", virt: "vmware", code: 1},
		{name: "vmware-customization", virt: "vmware", gi: map[string]string{}, files: vmtools("usr/lib/vmware-tools/plugins/vmsvc/libdeployPkgPlugin.so"), list: list("VMware", "None")},
		{name: "vmware-customization-lib64", virt: "vmware", gi: map[string]string{}, files: vmtools("usr/lib64/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so"), list: list("VMware", "None")},
		{name: "vmware-customization-multiarch", virt: "vmware", gi: map[string]string{}, files: vmtools("usr/lib/x86_64-linux-gnu/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so"), list: list("VMware", "None")},
		{name: "vmware-customization-disabled", virt: "vmware", gi: map[string]string{},
			files: files("usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so", "p", PathCloudCfg, "disable_vmware_customization: true\n"), code: 1},

		// OVF.
		{name: "ovf-seed", files: files(PathSeedDir+"/ovf/ovf-env.xml", "present\n"), list: list("OVF", "None")},
		{name: "ovf-cdrom-namespace", virt: "vmware", fs: ovfFS, files: ovfFiles, list: list("OVF", "None")},
		{name: "ovf-cdrom-label", virt: "vmware", fs: ovfLabelFS, list: list("OVF", "None")},
		{name: "ovf-virt-none", fs: ovfFS, files: ovfFiles, code: 1},
		{name: "ovf-on-azure", virt: "microsoft", dmi: bootenv.DMI{ChassisAssetTag: azureTag}, fs: ovfFS, files: ovfFiles, list: list("Azure", "None")},
		{name: "ovf-guestinfo", virt: "vmware", gi: map[string]string{"ovfEnv": "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Environment"}, list: list("OVF", "None")},
		{name: "ovf-cdrom-too-big", virt: "vmware", fs: ovfBigFS, files: ovfFiles, code: 1},
		{name: "ovf-cdrom-9mb", virt: "vmware", fs: ovf9FS, files: ovfFiles, list: list("OVF", "None")},
		{name: "ovf-cdrom-no-match", virt: "vmware", fs: ovfNoMatchFS, files: ovfNoMatchFiles, code: 1},
		{name: "ovf-not-a-cdrom", virt: "vmware", fs: []FSInfo{dev("vdb", "iso9660", "")}, files: files("dev/vdb", ovfNS), code: 1},
		{name: "ovf-sysfs-size", virt: "vmware", fs: []FSInfo{{Device: "/dev/sr0", Type: "iso9660"}}, files: merge(ovfFiles, files("sys/class/block/sr0/size", "2048\n")), list: list("OVF", "None")},

		// SmartOS.
		{name: "smartos-bhyve", virt: "vm-other", dmi: bootenv.DMI{ProductName: "SmartDC HVM"}, list: list("SmartOS", "None")},
		{name: "smartos-lxbrand", virt: "container-other", uname: &unameBrandZ, files: files("native/.zonecontrol/metadata.sock", ""), list: list("SmartOS", "None")},
		{name: "smartos-lxbrand-needs-socket", virt: "container-other", uname: &unameBrandZ, code: 1},

		// Scaleway.
		{name: "scaleway-dmi", dmi: bootenv.DMI{SysVendor: "Scaleway"}, list: list("Scaleway", "None")},
		{name: "scaleway-dmi-in-container", virt: "lxc", dmi: bootenv.DMI{SysVendor: "Scaleway"}, list: list("Scaleway", "None")},
		{name: "scaleway-cmdline", cmd: "scaleway boot=local", list: list("Scaleway", "None")},
		{name: "scaleway-var-run", files: files("var/run/scaleway", ""), list: list("Scaleway", "None")},
		{name: "scaleway-negative", dmi: bootenv.DMI{SysVendor: "Scaleway SAS"}, code: 1},

		// Hetzner.
		{name: "hetzner", dmi: bootenv.DMI{SysVendor: "Hetzner"}, list: list("Hetzner", "None")},
		{name: "hetzner-negative", dmi: bootenv.DMI{SysVendor: "Hetzner Online"}, code: 1},

		// IBMCloud.
		{name: "ibmcloud-metadata-disk", virt: "xen", fs: []FSInfo{dev("xvdb", "vfat", "METADATA")}, list: list("IBMCloud", "None")},
		{name: "ibmcloud-config-2", virt: "xen", fs: ibmConfig2, list: list("IBMCloud", "None")},
		{name: "ibmcloud-provisioning", virt: "xen", fs: []FSInfo{dev("xvdb", "vfat", "METADATA")}, files: provisioning(30 * time.Second), code: 1},
		{name: "ibmcloud-provisioning-no-log", virt: "xen", files: files("root/provisioningConfiguration.cfg", "k=v\n"), code: 1},
		{name: "ibmcloud-old-log-not-provisioning", virt: "xen", fs: []FSInfo{dev("xvdb", "vfat", "METADATA")}, files: provisioning(-30 * time.Second), list: list("IBMCloud", "None")},
		{name: "ibmcloud-nodisks", virt: "xen", code: 1},
		{name: "ibmcloud-other-uuid-is-configdrive", virt: "xen", fs: []FSInfo{{Device: "/dev/xvdb", Type: "vfat", Label: "config-2", UUID: "DEAD-BEEF"}}, list: list("ConfigDrive", "None")},
		{name: "ibmcloud-with-nocloud-seed", virt: "xen", fs: ibmConfig2, files: seedNoCloud, list: list("NoCloud", "IBMCloud", "None")},
		{name: "ibmcloud-with-configdrive-seed", virt: "xen", fs: ibmConfig2, files: seedConfigDrive, list: list("ConfigDrive", "IBMCloud", "None")},
		{name: "ibmcloud-needs-xen", virt: "kvm", fs: []FSInfo{dev("vdb", "vfat", "METADATA")}, code: 1},

		// Oracle, Exoscale, RbxCloud, UpCloud.
		{name: "oracle", dmi: bootenv.DMI{ChassisAssetTag: "OracleCloud.com"}, list: list("Oracle", "None")},
		{name: "oracle-negative", dmi: bootenv.DMI{ChassisAssetTag: "Not Oracle"}, code: 1},
		{name: "exoscale", dmi: bootenv.DMI{ProductName: "Exoscale Compute Platform"}, list: list("Exoscale", "None")},
		{name: "exoscale-negative", dmi: bootenv.DMI{ProductName: "The Exoscale"}, code: 1},
		{name: "rbxcloud", fs: []FSInfo{dev("vdb", "vfat", "CLOUDMD")}, list: list("RbxCloud", "None")},
		{name: "rbxcloud-lower", fs: []FSInfo{dev("vdb", "vfat", "cloudmd")}, list: list("RbxCloud", "None")},
		{name: "upcloud", dmi: bootenv.DMI{SysVendor: "UpCloud"}, list: list("UpCloud", "None")},
		{name: "upcloud-negative", dmi: bootenv.DMI{SysVendor: "upcloud"}, code: 1},

		// arm64. DMI reaches an arm64 guest only through UEFI's SMBIOS tables
		// (AAVMF in QEMU, every arm64 cloud); a guest booted without firmware
		// has a device tree and no /sys/class/dmi, so DMI reads empty, as in
		// cloud-init. The seed label still finds NoCloud; OpenStack stays a
		// maybe off x86 (as on ppc64le).
		{name: "arm64-uefi-smbios-serial", virt: "qemu", uname: &unameARM64, dmi: bootenv.DMI{SysVendor: "QEMU", ProductName: "QEMU KVM Virtual Machine", ProductSerial: "ds=nocloud;s=file:///srv/smbios/"}, list: list("NoCloud", "None")},
		{name: "arm64-ec2-graviton", virt: "kvm", uname: &unameARM64, dmi: bootenv.DMI{SysVendor: "Amazon EC2", ProductSerial: "ec23aef5-54be-4843-8d24-8c819f88453e", ProductUUID: awsUUID}, list: list("Ec2", "None")},
		{name: "arm64-azure-cobalt", virt: "microsoft", uname: &unameARM64, dmi: bootenv.DMI{ChassisAssetTag: azureTag}, list: list("Azure", "None")},
		{name: "arm64-devicetree-cidata", virt: "qemu", uname: &unameARM64, fs: []FSInfo{dev("sr0", "iso9660", "cidata")}, list: list("NoCloud", "None")},
		{name: "arm64-devicetree-nothing", virt: "qemu", uname: &unameARM64, code: 1},
		{name: "maybe-all-openstack-arm64", virt: "qemu", uname: &unameARM64, policy: policyMaybeAll, list: list("OpenStack", "None")},

		// LXD.
		{name: "lxd-socket", virt: "lxc", files: fstest.MapFS{"dev/lxd/sock": socket()}, list: list("LXD", "None")},
		// cloud-init 26.x no longer takes DMI board_name LXD as LXD.
		{name: "lxd-kvm-board-name", virt: "kvm", dmi: bootenv.DMI{BoardName: "LXD"}, code: 1},
		{name: "lxd-qemu-virtio-port", virt: "qemu", files: files("sys/class/virtio-ports/vport1p1/name", "org.linuxcontainers.lxd\n"), list: list("LXD", "None")},
		{name: "lxd-kvm-env-virt", env: map[string]string{"SYSTEMD_VIRTUALIZATION": "vm:qemu"}, files: files("sys/class/virtio-ports/vport1p1/name", "org.linuxcontainers.lxd\n"), list: list("LXD", "None")},
		{name: "lxd-virtio-port", virt: "kvm", files: files("sys/class/virtio-ports/vport1p1/name", "com.canonical.lxd\n"), list: list("LXD", "None")},
		{name: "lxd-board-name-needs-vm", dmi: bootenv.DMI{BoardName: "LXD"}, code: 1},
		{name: "lxd-sock-not-a-socket", virt: "lxc", files: files("dev/lxd/sock", ""), code: 1},

		// NWCS, Akamai, CloudCIX.
		{name: "nwcs", dmi: bootenv.DMI{SysVendor: "NWCS"}, list: list("NWCS", "None")},
		{name: "nwcs-negative", dmi: bootenv.DMI{SysVendor: "NWCSX"}, code: 1},
		{name: "akamai-linode", dmi: bootenv.DMI{SysVendor: "Linode"}, list: list("Akamai", "None")},
		{name: "akamai", dmi: bootenv.DMI{SysVendor: "Akamai"}, list: list("Akamai", "None")},
		{name: "akamai-negative", dmi: bootenv.DMI{SysVendor: "Other"}, code: 1},
		{name: "cloudcix", dmi: bootenv.DMI{ProductName: "CloudCIX"}, list: list("CloudCIX", "None")},
		{name: "cloudcix-negative", dmi: bootenv.DMI{ProductName: "CloudCIX VM"}, code: 1},

		// WSL.
		{name: "wsl-instance-user-data", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl(".cloud-init/Noble-Dev.user-data", ubuntuOSR), list: list("WSL", "None")},
		{name: "wsl-id-version", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl(".cloud-init/ubuntu-24.04.user-data", ubuntuOSR), list: list("WSL", "None")},
		{name: "wsl-id-codename", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl(".cloud-init/debian-trixie.user-data", debianOSR), list: list("WSL", "None")},
		{name: "wsl-id-all", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl(".cloud-init/ubuntu-all.user-data", ubuntuOSR), list: list("WSL", "None")},
		{name: "wsl-default", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl(".cloud-init/default.user-data", ubuntuOSR), list: list("WSL", "None")},
		{name: "wsl-ubuntu-pro-agent", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl(".ubuntupro/.cloud-init/agent.yaml", ubuntuOSR), list: list("WSL", "None")},
		{name: "wsl-no-user-data", virt: "wsl", uname: &unameWSL, env: wslEnv, files: wsl("", ubuntuOSR), code: 1},
		{name: "wsl-other-virt", virt: "kvm", uname: &unameWSL, env: wslEnv, files: wsl(".cloud-init/default.user-data", ubuntuOSR), code: 1},
		{name: "wsl-no-host-mounts", virt: "wsl", uname: &unameWSL, env: wslEnv,
			files: files("proc/mounts", "/dev/sdd / ext4 rw 0 0\n", "mnt/c/Users/me/.cloud-init/default.user-data", ""), code: 1},
	}
}

func TestScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenarios() {
		if seen[s.name] {
			t.Fatalf("duplicate scenario %q", s.name)
		}
		seen[s.name] = true
		t.Run(s.name, func(t *testing.T) {
			r := Identify(s.inputs())
			if r.ExitCode != s.code {
				t.Errorf("exit code = %d, want %d\nlog:\n%s", r.ExitCode, s.code, strings.Join(r.Log, "\n"))
			}
			if diff := cmp.Diff(s.list, r.List); diff != "" {
				t.Errorf("datasource_list (-want +got):\n%s\ncandidates: %+v\nlog:\n%s", diff, r.Found, strings.Join(r.Log, "\n"))
			}
			wantDec := Enabled
			if s.code != 0 {
				wantDec = Disabled
			}
			if r.Decision != wantDec {
				t.Errorf("decision = %s, want %s", r.Decision, wantDec)
			}
			if s.cfg != "" {
				if diff := cmp.Diff(s.cfg, r.CloudCfg); diff != "" {
					t.Errorf("cloud.cfg (-want +got):\n%s", diff)
				}
			} else if s.list != nil && !strings.HasPrefix(r.CloudCfg, FormatList(s.list)+"\n") {
				t.Errorf("cloud.cfg = %q, want it to start with %q", r.CloudCfg, FormatList(s.list))
			}
		})
	}
	if n := len(seen); n < 93 {
		t.Errorf("only %d scenarios", n)
	}
}

// TestEveryDatasourceCovered makes sure each registry entry has a
// scenario where it is written and one where it is not.
func TestEveryDatasourceCovered(t *testing.T) {
	pos, neg := map[string]bool{}, map[string]bool{}
	for _, s := range scenarios() {
		r := Identify(s.inputs())
		for _, c := range r.Found {
			if c.Result == NotFound {
				neg[c.Name] = true
			}
		}
		for _, n := range r.List {
			pos[n] = true
		}
	}
	for _, d := range Datasources() {
		if !pos[d.Name] {
			t.Errorf("%s: no positive scenario", d.Name)
		}
		if !neg[d.Name] {
			t.Errorf("%s: no negative scenario", d.Name)
		}
	}
}
