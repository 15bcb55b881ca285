package identify

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// VMware and OVF: the checks that look at guestinfo and cdroms.

func hasAlnum(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) >= 0
}

func checkVMware(f *Facts) Check {
	env := f.in.Env
	if env["VMX_GUESTINFO"] != "" {
		for _, k := range []string{"VMX_GUESTINFO_METADATA", "VMX_GUESTINFO_USERDATA", "VMX_GUESTINFO_VENDORDATA"} {
			if env[k] != "" {
				return found("environment " + k)
			}
		}
	}
	if f.virt != "vmware" {
		return notFound("virt is not vmware")
	}
	if f.in.Guestinfo == nil {
		return notFound("no vmware-rpctool or vmtoolsd")
	}
	for _, k := range []string{"metadata", "userdata", "vendordata"} {
		if hasAlnum(f.in.Guestinfo[k]) {
			return found("guestinfo." + k)
		}
	}
	if vmwareCustomization(f) {
		return found("guest customization enabled")
	}
	return notFound("no guestinfo data and no guest customization")
}

// vmwareCustomization is vmware_guest_customization: the deployPkg plugin
// is installed and disable_vmware_customization is false.
func vmwareCustomization(f *Facts) bool {
	if f.virt != "vmware" {
		return false
	}
	const plugin = "plugins/vmsvc/libdeployPkgPlugin.so"
	var have bool
	for _, pkg := range []string{"vmware-tools", "open-vm-tools"} {
		for _, dir := range []string{"usr/lib", "usr/lib64", "usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib/i386-linux-gnu"} {
			if isRegular(f.files, dir+"/"+pkg+"/"+plugin) {
				have = true
			}
		}
	}
	if !have {
		return false
	}
	v, _, ok := checkConfig(f.files, "disable_vmware_customization", configFiles(f.files, ""))
	return ok && (v == "0" || v == "false" || v == "False")
}

func checkOVF(f *Facts) Check {
	if f.seedDir("ovf", "ovf-env.xml") {
		return found("seed ovf/ovf-env.xml")
	}
	if f.virt == "none" {
		return notFound("virt is none")
	}
	if f.dmi().assetTag == azureChassis {
		return notFound("Azure provides OVF; not a separate source")
	}
	if f.virt == "vmware" && f.in.Guestinfo != nil {
		out, ok := f.in.Guestinfo["ovfEnv"]
		switch {
		case !ok:
			f.debug(1, "Running on vmware but query returned 1: No value found")
		case strings.HasPrefix(out, "<?xml") || strings.HasPrefix(out, "<?XML"):
			f.debug(1, "Found guestinfo transport.")
			return found("guestinfo.ovfEnv")
		default:
			f.debug(1, "guestinfo.ovfEnv had non-xml content: "+out)
		}
	}
	for _, d := range f.isoDevs {
		if f.isCdromOVF(d) {
			return found("OVF environment cdrom " + d.Device)
		}
	}
	return notFound("no OVF seed, guestinfo or cdrom")
}

// isCdromOVF is is_cdrom_ovf.
func (f *Facts) isCdromOVF(d FSInfo) bool {
	name, ok := strings.CutPrefix(d.Device, "/dev/")
	if !ok || !(glob("sr[0-9]", name) || glob("hd[a-z]", name)) {
		f.debug(1, "skipping iso dev "+d.Device)
		return false
	}
	f.debug(1, "got label="+d.Label)
	switch d.Label {
	case "OVF-TRANSPORT", "ovf-transport", "OVFENV", "ovfenv", "OVF ENV", "ovf env":
		return true
	case "config-2", "CONFIG-2", "cidata", "CIDATA":
		return false
	}
	if strings.HasPrefix(d.Label, "rd_rdfe_stable") {
		return false
	}
	size := d.Size
	if size <= 0 {
		s, ok := readFirstLine(f.host, "sys/class/block/"+name+"/size")
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f.warn("failed reading from /sys/class/block/" + name + "/size")
			return false
		}
		size = n * 512
	}
	if mb := size / (1 << 20); mb >= 10 {
		f.debug(2, fmt.Sprintf("%s: size %dMB is considered too large for OVF", d.Device, mb))
		return false
	}
	file, err := f.host.Open("dev/" + name)
	if err != nil {
		return false
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, 10<<20))
	if err != nil {
		return false
	}
	return bytes.Contains(bytes.ToLower(b), []byte(ovfEnvNamespace))
}
