// Package distro describes what differs per Linux distribution: identity
// from os-release, the default user cloud-init creates, the groups that user
// joins, and the hosts-file template. The target's /etc/os-release decides.
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
			return ParseOSRelease(b)
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
	in.Family = family(in)
	return in
}

var families = map[string]string{
	"debian": "debian", "ubuntu": "debian", "raspbian": "debian", "linuxmint": "debian", "pop": "debian",
	"rhel": "redhat", "centos": "redhat", "fedora": "redhat", "rocky": "redhat", "almalinux": "redhat",
	"amzn": "redhat", "ol": "redhat", "cloudlinux": "redhat", "eurolinux": "redhat", "virtuozzo": "redhat",
	"azurelinux": "redhat", "mariner": "redhat", "photon": "redhat", "openeuler": "redhat",
	"opensuse": "suse", "opensuse-leap": "suse", "opensuse-tumbleweed": "suse", "sles": "suse", "sled": "suse",
	"arch": "arch", "alpine": "alpine", "gentoo": "gentoo", "freebsd": "freebsd",
}

func family(in Info) string {
	if f, ok := families[in.ID]; ok {
		return f
	}
	for _, l := range in.IDLike {
		if f, ok := families[l]; ok {
			return f
		}
	}
	return "debian"
}

// DefaultUser is the distro's system_info.default_user as cloud-init's
// rendered cloud.cfg sets it. Keys are cloud-init's.
func (in Info) DefaultUser() map[string]any {
	u := map[string]any{
		"lock_passwd": true,
		"sudo":        []any{"ALL=(ALL) NOPASSWD:ALL"},
		"shell":       "/bin/bash",
	}
	switch in.ID {
	case "ubuntu":
		u["name"] = "ubuntu"
		u["gecos"] = "Ubuntu"
		u["groups"] = []any{"adm", "cdrom", "dip", "lxd", "sudo"}
	case "debian":
		u["name"] = "debian"
		u["gecos"] = "Debian"
		u["groups"] = []any{"adm", "audio", "cdrom", "dialout", "dip", "floppy", "plugdev", "sudo", "video"}
	case "fedora":
		u["name"] = "fedora"
		u["gecos"] = "fedora Cloud User"
		u["groups"] = []any{"wheel", "adm", "systemd-journal"}
	case "amzn":
		u["name"] = "ec2-user"
		u["gecos"] = "EC2 Default User"
		u["groups"] = []any{"wheel", "adm", "systemd-journal"}
	case "alpine":
		u["name"] = "alpine"
		u["gecos"] = "Alpine"
		u["groups"] = []any{"adm", "wheel"}
		u["shell"] = "/bin/ash"
		u["doas"] = []any{"permit nopass alpine"}
		delete(u, "sudo")
	case "arch":
		u["name"] = "arch"
		u["gecos"] = "arch Cloud User"
		u["groups"] = []any{"wheel", "users"}
	default:
		switch in.Family {
		case "redhat":
			u["name"] = "cloud-user"
			u["gecos"] = "Cloud User"
			u["groups"] = []any{"adm", "systemd-journal"}
		case "suse":
			u["name"] = "opensuse"
			u["gecos"] = "opensuse"
			u["groups"] = []any{"users"}
		default:
			u["name"] = in.ID
			if in.ID == "unknown" || in.ID == "linux" {
				u["name"] = "cloud-user"
			}
			u["gecos"] = "Cloud User"
			u["groups"] = []any{"adm", "sudo"}
		}
	}
	return u
}

// HostsTemplateName is the /etc/cloud/templates/hosts.<name>.tmpl variant.
func (in Info) HostsTemplateName() string {
	switch in.Family {
	case "redhat":
		return "redhat"
	case "suse":
		return "suse"
	case "alpine":
		return "alpine"
	case "arch":
		return "arch"
	case "freebsd":
		return "freebsd"
	}
	return "debian"
}
