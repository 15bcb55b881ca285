package templates

import (
	"embed"
	"strings"
	"sync"
)

//go:embed ntp/*.tmpl
var ntpFS embed.FS

// ntpShared maps cc_ntp template names to the template a distro shares
// with its family (the directives are the same; cloud-init keeps a copy
// per distro).
var ntpShared = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"chrony.conf.ubuntu": "chrony.conf.debian", "chrony.conf.alpine": "chrony.conf.debian",
		"chrony.conf.centos": "chrony.conf.rhel", "chrony.conf.almalinux": "chrony.conf.rhel",
		"chrony.conf.rocky": "chrony.conf.rhel", "chrony.conf.cloudlinux": "chrony.conf.rhel",
		"chrony.conf.opensuse": "chrony.conf.rhel", "chrony.conf.opensuse-leap": "chrony.conf.rhel",
		"chrony.conf.opensuse-tumbleweed": "chrony.conf.rhel", "chrony.conf.opensuse-microos": "chrony.conf.rhel",
		"chrony.conf.sles": "chrony.conf.rhel", "chrony.conf.sle_hpc": "chrony.conf.rhel", "chrony.conf.sle-micro": "chrony.conf.rhel",
		"chrony.conf.photon": "chrony.conf.fedora",
		"ntp.conf.ubuntu":    "ntp.conf.debian",
		"ntp.conf.almalinux": "ntp.conf.rhel", "ntp.conf.rocky": "ntp.conf.rhel",
		"ntp.conf.cloudlinux": "ntp.conf.rhel", "ntp.conf.photon": "ntp.conf.rhel",
		"ntp.conf.sles": "ntp.conf.opensuse",
	}
})

// NTP is cloudroot's template for a cc_ntp template name such as
// "chrony.conf.debian" or "timesyncd.conf", as a Jinja template; false
// when there is none (cloud-init has none either).
func NTP(name string) ([]byte, bool) {
	name = strings.TrimSuffix(name, ".tmpl")
	if s, ok := ntpShared()[name]; ok {
		name = s
	}
	b, err := ntpFS.ReadFile("ntp/" + name + ".tmpl")
	return b, err == nil
}
