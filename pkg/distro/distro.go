// Package distro is what differs per distribution, as data and small
// interfaces chosen from the target's os-release, the way cloud-init's
// distros/ classes are chosen:
//
//   - Info: identity parsed from os-release; Variant picks cloud-init's
//     cloud.cfg variant (and distro class), Family its osfamily;
//   - DefaultCloudConfig: the default /etc/cloud/cloud.cfg cloud-init's
//     package installs for the variant (module lists, system_info);
//   - Facts: default user, init system, network renderer order, hosts
//     template, locale/timezone/keyboard/hostname mechanics, paths and
//     cc_ntp's client table;
//   - PackageManager and ServiceManager: the argv sequences cloud-init runs
//     to update/upgrade/install packages and to start/stop/enable services.
//
// Everything here is pure: callers read the target and run commands.
package distro

import (
	"bufio"
	"bytes"
	"strings"
)

// Info is a distribution as read from os-release.
type Info struct {
	ID        string   // os-release ID, e.g. "debian"
	IDLike    []string // os-release ID_LIKE
	VersionID string
	Name      string
	// Family is the cloud-init osfamily: debian, redhat, suse, arch, alpine, gentoo, freebsd...
	Family string
}

// ReadFile is how ParseOSRelease's caller reads files (a target root).
type ReadFile func(p string) ([]byte, error)

// Detect reads /etc/os-release, then /usr/lib/os-release, through read.
// An unreadable file gives the "unknown" distro (debian-like defaults).
func Detect(read ReadFile) Info {
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if b, err := read(p); err == nil {
			in := ParseOSRelease(b)
			// Raspberry Pi OS says ID=debian; cloud-init tells it apart by
			// /etc/rpi-issue, as here.
			if _, err := read("/etc/rpi-issue"); err == nil {
				in.ID = "raspberry-pi-os"
				in.Family = variantFamily(in.Variant())
			}
			return in
		}
	}
	return Info{ID: "unknown", Family: "debian"}
}

// ParseOSRelease parses os-release(5) text.
func ParseOSRelease(b []byte) Info {
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
			v = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`, "\\`", "`").Replace(v)
		}
		kv[strings.TrimSpace(k)] = v
	}
	in := Info{
		ID:        strings.ToLower(kv["ID"]),
		IDLike:    strings.Fields(strings.ToLower(kv["ID_LIKE"])),
		VersionID: kv["VERSION_ID"],
		Name:      kv["NAME"],
	}
	if in.ID == "" {
		in.ID = "linux"
	}
	in.Family = variantFamily(in.Variant())
	return in
}

// DefaultUser is the distro's system_info.default_user as cloud-init's
// rendered cloud.cfg sets it (for the variant Variant picks). Keys are
// cloud-init's.
func (in Info) DefaultUser() map[string]any {
	return variantUser(in.Variant()).Map()
}

// DefaultUserName is the name of the distro's default user
// (system_info.default_user.name).
func (in Info) DefaultUserName() string { return variantUser(in.Variant()).Name }

// HostsTemplateName is the /etc/cloud/templates/hosts.<name>.tmpl variant:
// the distro class's osfamily attribute, which cloud-init's
// cc_update_etc_hosts uses (its own name for Photon, Mariner, Azure Linux,
// openEuler and OpenCloudOS/TencentOS; the system name on the BSDs).
func (in Info) HostsTemplateName() string {
	switch v := in.Variant(); v {
	case "photon", "mariner", "azurelinux", "openeuler", "OpenCloudOS", "dragonfly", "netbsd", "openbsd", "freebsd":
		return v
	case "TencentOS":
		return "OpenCloudOS"
	default:
		return variantFamily(v)
	}
}
