package distro

import "strconv"

// NTPPoolNames are the default servers cc_ntp writes when the config names
// none: 0..3.<distro>.pool.ntp.org for the distro class name, except SLES
// (opensuse's pool: sles has none) and Alpine and EuroLinux (the plain
// pool.ntp.org: they have no vendor pool).
func NTPPoolNames(distroName string) []string {
	pool := distroName
	switch distroName {
	case "sles":
		pool = "opensuse"
	case "alpine", "eurolinux":
		pool = ""
	}
	out := make([]string, 0, 4)
	for i := range 4 {
		n := strconv.Itoa(i)
		if pool != "" {
			n += "." + pool
		}
		out = append(out, n+".pool.ntp.org")
	}
	return out
}
