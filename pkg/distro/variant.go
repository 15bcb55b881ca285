package distro

// Variants. cloud-init's packaging renders one default cloud.cfg per
// "variant" (tools/render-template --variant), and the variant names the
// distro class, the default user and the network renderer order. A target's
// variant is chosen from its os-release the way cloud-init's
// util.system_info() does (ID, with the few renames it makes), then — for an
// ID cloud-init does not know — from ID_LIKE, which is what installing the
// parent distro's package on a derivative gives. Nothing known at all is
// cloud-init's "unknown" variant (its Ubuntu-like fallback).

import (
	"strings"
	"sync"
)

// VariantUnknown is cloud-init's fallback variant.
const VariantUnknown = "unknown"

// variantByID maps an os-release ID (lower case) to the cloud.cfg variant.
var variantByID = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"almalinux": "almalinux", "alpine": "alpine", "aosc": "aosc", "arch": "arch",
		"azurelinux": "azurelinux", "centos": "centos", "cloudlinux": "cloudlinux",
		"debian": "debian", "eurolinux": "eurolinux", "fedora": "fedora", "mariner": "mariner",
		"miraclelinux": "miraclelinux", "openeuler": "openeuler", "opencloudos": "OpenCloudOS",
		"openmandriva": "openmandriva", "photon": "photon", "raspberry-pi-os": "raspberry-pi-os",
		"rhel": "rhel", "redhat": "rhel", "rocky": "rocky", "tencentos": "TencentOS",
		"virtuozzo": "virtuozzo", "gentoo": "gentoo",
		"ubuntu": "ubuntu", "linuxmint": "ubuntu", "mint": "ubuntu",
		"suse": "suse", "opensuse": "suse", "opensuse-leap": "suse", "opensuse-microos": "suse",
		"opensuse-tumbleweed": "suse", "sle_hpc": "suse", "sle-micro": "suse", "sles": "suse", "sled": "suse",
		// Distros whose cloud-init package is built with another variant.
		"amzn": "amazon", "amazon": "amazon", "devuan": "debian", "ol": "rhel", "navix": "rhel",
		// The BSDs (cloud-init reads platform.system() there).
		"freebsd": "freebsd", "netbsd": "netbsd", "openbsd": "openbsd", "dragonfly": "dragonfly",
	}
})

// familyByVariant is cloud-init's OSFAMILIES, by variant.
var familyByVariant = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"alpine": "alpine", "aosc": "aosc", "arch": "arch",
		"debian": "debian", "ubuntu": "debian", "raspberry-pi-os": "debian", VariantUnknown: "debian",
		"freebsd": "freebsd", "dragonfly": "freebsd", "gentoo": "gentoo",
		"netbsd": "netbsd", "openbsd": "openbsd",
		"almalinux": "redhat", "amazon": "redhat", "azurelinux": "redhat", "centos": "redhat",
		"cloudlinux": "redhat", "eurolinux": "redhat", "fedora": "redhat", "mariner": "redhat",
		"miraclelinux": "redhat", "openmandriva": "redhat", "photon": "redhat", "rhel": "redhat",
		"rocky": "redhat", "virtuozzo": "redhat", "openeuler": "redhat", "OpenCloudOS": "redhat",
		"TencentOS": "redhat",
		"suse":      "suse",
	}
})

// Variants lists every variant cloud-init's tools/render-template accepts
// (without its "benchmark" test variant), in its order.
var Variants = []string{
	"almalinux", "alpine", "amazon", "aosc", "arch", "azurelinux", "centos", "cloudlinux",
	"debian", "dragonfly", "eurolinux", "fedora", "freebsd", "gentoo", "mariner",
	"miraclelinux", "netbsd", "openbsd", "openeuler", "OpenCloudOS", "openmandriva", "photon",
	"raspberry-pi-os", "rhel", "suse", "rocky", "TencentOS", "ubuntu", VariantUnknown, "virtuozzo",
}

// Variant is the cloud.cfg variant for this os-release: the ID when
// cloud-init knows it, else the first ID_LIKE entry it knows, else
// "unknown".
func (in Info) Variant() string {
	if v, ok := variantByID()[strings.ToLower(in.ID)]; ok {
		return v
	}
	for _, l := range in.IDLike {
		if v, ok := variantByID()[strings.ToLower(l)]; ok {
			return v
		}
	}
	return VariantUnknown
}

// variantFamily is the osfamily of a variant ("debian" for unknown ones).
func variantFamily(v string) string {
	if f, ok := familyByVariant()[v]; ok {
		return f
	}
	return "debian"
}

// isRHEL is cloud.cfg.tmpl's is_rhel: the RHEL rebuilds.
func isRHEL(v string) bool {
	switch v {
	case "almalinux", "centos", "cloudlinux", "eurolinux", "miraclelinux", "rhel", "rocky", "virtuozzo":
		return true
	}
	return false
}

// isBSD is cloud.cfg.tmpl's is_bsd.
func isBSD(v string) bool {
	switch v {
	case "dragonfly", "freebsd", "netbsd", "openbsd":
		return true
	}
	return false
}
