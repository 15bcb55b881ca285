package distro

// Facts cc_apt_configure needs about a Debian-family target.

import (
	"strconv"
	"strings"
)

// AptSourcesDeb822 reports whether cloud-init's packaging for the release
// writes the primary sources as a deb822 /etc/apt/sources.list.d/<distro>.sources
// (its APT_DEB822_SOURCE_LIST_FILE feature) rather than one-line
// /etc/apt/sources.list: upstream's default is deb822, which Debian's and
// Ubuntu's packages turn off on releases whose apt predates the switch —
// Debian before 13 (trixie), Ubuntu before 23.10. A release without a
// VERSION_ID (Debian testing, sid) is newer than any.
func (in Info) AptSourcesDeb822() bool {
	if in.VersionID == "" {
		return true
	}
	major, minor, _ := strings.Cut(in.VersionID, ".")
	m, err := strconv.Atoi(major)
	if err != nil {
		return true
	}
	n, _ := strconv.Atoi(minor)
	switch in.Variant() {
	case "ubuntu":
		return m > 23 || (m == 23 && n >= 10)
	case "debian", "raspberry-pi-os":
		return m >= 13
	}
	return true
}

// OSReleaseCodename is os-release's VERSION_CODENAME (what `lsb_release
// -cs` prints on Debian and Ubuntu), or, failing that, UBUNTU_CODENAME.
func OSReleaseCodename(osRelease []byte) string {
	var ubuntu string
	for _, line := range strings.Split(string(osRelease), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch k {
		case "VERSION_CODENAME":
			if v != "" {
				return v
			}
		case "UBUNTU_CODENAME":
			ubuntu = v
		}
	}
	return ubuntu
}
