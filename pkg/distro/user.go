package distro

import "sync"

// The default user: system_info.default_user as cloud-init's cloud.cfg
// template gives it per variant. Most variants name the user after
// themselves and call it "<variant> Cloud User"; the table lists the rest.

// User is a default user, with cloud-init's keys.
type User struct {
	Name         string   `json:"name"`
	Gecos        string   `json:"gecos"`
	Groups       []string `json:"groups"`
	PrimaryGroup string   `json:"primary_group,omitempty"`
	NoUserGroup  bool     `json:"no_user_group,omitempty"`
	LockPasswd   bool     `json:"lock_passwd"`
	Sudo         []string `json:"sudo,omitempty"`
	Doas         []string `json:"doas,omitempty"`
	Shell        string   `json:"shell"`
}

// sudoAll is the sudo rule every variant's default user gets.
const sudoAll = "ALL=(ALL) NOPASSWD:ALL"

var (
	userNames = sync.OnceValue(func() map[string]string {
		return map[string]string{
			"amazon": "ec2-user", "azurelinux": "azureuser", "centos": "cloud-user",
			"openmandriva": "omv", "raspberry-pi-os": "pi", "rhel": "cloud-user", VariantUnknown: "ubuntu",
		}
	})
	userGecos = sync.OnceValue(func() map[string]string {
		return map[string]string{
			"amazon": "EC2 Default User", "azurelinux": "Azure Linux", "centos": "Cloud User",
			"debian": "Debian", "dragonfly": "DragonFly", "freebsd": "FreeBSD", "mariner": "MarinerOS",
			"rhel": "Cloud User", "netbsd": "NetBSD", "openbsd": "openBSD",
			"openmandriva": "OpenMandriva admin", "photon": "PhotonOS", "raspberry-pi-os": "Raspberry Pi OS",
			"ubuntu": "Ubuntu", VariantUnknown: "Ubuntu",
		}
	})
	userGroups = sync.OnceValue(func() map[string][]string {
		return map[string][]string{
			"alpine":       {"adm", "wheel"},
			"aosc":         {"wheel"},
			"arch":         {"wheel", "users"},
			"debian":       {"adm", "audio", "cdrom", "dialout", "dip", "floppy", "netdev", "plugdev", "sudo", "video"},
			"gentoo":       {"users", "wheel"},
			"mariner":      {"wheel"},
			"photon":       {"wheel"},
			"openmandriva": {"wheel", "users", "systemd-journal"},
			"raspberry-pi-os": {"adm", "dialout", "cdrom", "audio", "users", "sudo", "video", "games", "plugdev",
				"input", "gpio", "spi", "i2c", "netdev", "render", "lpadmin"},
			"suse":         {"cdrom", "users"},
			"ubuntu":       {"adm", "cdrom", "dip", "lxd", "sudo"},
			VariantUnknown: {"adm", "cdrom", "dip", "lxd", "sudo"},
		}
	})
	userShells = sync.OnceValue(func() map[string]string {
		return map[string]string{
			"alpine": "/bin/ash", "dragonfly": "/bin/sh", "freebsd": "/bin/tcsh",
			"netbsd": "/bin/sh", "openbsd": "/bin/ksh",
		}
	})
)

// variantUser is the default user of a variant.
func variantUser(v string) User {
	u := User{Name: v, Gecos: v + " Cloud User", LockPasswd: true, Sudo: []string{sudoAll}, Shell: "/bin/bash"}
	if n, ok := userNames()[v]; ok {
		u.Name = n
	}
	if g, ok := userGecos()[v]; ok {
		u.Gecos = g
	}
	switch g, ok := userGroups()[v]; {
	case ok:
		u.Groups = append([]string(nil), g...)
	case isBSD(v):
		u.Groups = []string{"wheel"}
	case isRHEL(v):
		u.Groups = []string{"adm", "systemd-journal"}
	default:
		u.Groups = []string{"wheel", "adm", "systemd-journal"}
	}
	if v == "gentoo" {
		u.PrimaryGroup, u.NoUserGroup = "users", true
	}
	switch v {
	case "alpine", "freebsd", "openbsd":
		u.Doas = []string{"permit nopass " + u.Name}
	}
	if s, ok := userShells()[v]; ok {
		u.Shell = s
	}
	return u
}

// Map is the user as a cloud-config mapping (system_info.default_user).
func (u User) Map() map[string]any {
	m := map[string]any{
		"name":        u.Name,
		"gecos":       u.Gecos,
		"groups":      strs(u.Groups),
		"lock_passwd": u.LockPasswd,
		"shell":       u.Shell,
	}
	if len(u.Sudo) > 0 {
		m["sudo"] = strs(u.Sudo)
	}
	if len(u.Doas) > 0 {
		m["doas"] = strs(u.Doas)
	}
	if u.PrimaryGroup != "" {
		m["primary_group"] = u.PrimaryGroup
	}
	if u.NoUserGroup {
		m["no_user_group"] = true
	}
	return m
}

func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
