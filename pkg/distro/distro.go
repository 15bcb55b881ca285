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
	in.Family = variantFamily(in.Variant())
	return in
}

// DefaultUser is the distro's system_info.default_user as cloud-init's
// rendered cloud.cfg sets it (for the variant Variant picks). Keys are
// cloud-init's.
func (in Info) DefaultUser() map[string]any {
	return variantUser(in.Variant()).Map()
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
