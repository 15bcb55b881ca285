package distro

import "sync"

// cc_ca_certs' trust-store table (DISTRO_CONFIG and DISTRO_FAMILY), keyed
// by the distro class name (system_info.distro, i.e. the variant).

// CACerts is where a distro keeps trusted CA certificates.
type CACerts struct {
	// Path is the generated store whose contents removing the defaults
	// deletes ("" where the defaults are deselected instead).
	Path string `json:"ca_cert_path,omitempty"`
	// LocalPath is where added certificates go; Filename is their name
	// under it, with {cert_index} counting from 1.
	LocalPath string `json:"ca_cert_local_path"`
	Filename  string `json:"ca_cert_filename"`
	// Config lists the default certificates (Debian's
	// /etc/ca-certificates.conf); removing the defaults prefixes each
	// with "!".
	Config    string   `json:"ca_cert_config,omitempty"`
	UpdateCmd []string `json:"ca_cert_update_cmd"`
	// RemoveDefaults is how remove_defaults works here: "delete" (empty
	// Path and LocalPath), "deselect" (Config), "deselect+debconf" (also
	// tell debconf not to trust new certificates), or "" (nothing).
	RemoveDefaults string `json:"remove_defaults,omitempty"`
}

var caCertsFamily = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"almalinux": "rhel", "amazon": "rhel", "centos": "rhel", "cloudlinux": "rhel", "fedora": "rhel", "rocky": "rhel",
		"opensuse-microos": "opensuse", "opensuse-tumbleweed": "opensuse", "opensuse-leap": "opensuse",
		"sle_hpc": "opensuse", "sle-micro": "opensuse", "sles": "opensuse",
	}
})

// CACertsDistros is cc_ca_certs' distro list.
var CACertsDistros = []string{"almalinux", "amazon", "centos", "cloudlinux", "fedora", "opensuse-microos",
	"opensuse-tumbleweed", "opensuse-leap", "rocky", "sle_hpc", "sle-micro", "sles",
	"aosc", "alpine", "debian", "raspberry-pi-os", "rhel", "opensuse", "ubuntu", "photon"}

// CACerts is cc_ca_certs' configuration for the distro.
func (f Facts) CACerts() CACerts {
	name := f.SystemInfo.Distro
	fam := name
	if x, ok := caCertsFamily()[name]; ok {
		fam = x
	}
	c := CACerts{LocalPath: "/usr/local/share/ca-certificates/", Filename: "cloud-init-ca-cert-{cert_index}.crt",
		Config: "/etc/ca-certificates.conf", UpdateCmd: []string{"update-ca-certificates"}}
	switch fam {
	case "aosc":
		c = CACerts{Path: "/etc/ssl/certs/", LocalPath: "/etc/ssl/certs/", Filename: "cloud-init-ca-cert-{cert_index}.pem",
			Config: "/etc/ca-certificates/conf.d/cloud-init.conf", UpdateCmd: []string{"update-ca-bundle"}}
	case "rhel":
		c = CACerts{Path: "/etc/pki/ca-trust/", LocalPath: "/usr/share/pki/ca-trust-source/",
			Filename: "anchors/cloud-init-ca-cert-{cert_index}.crt", UpdateCmd: []string{"update-ca-trust"}}
	case "opensuse":
		c = CACerts{Path: "/etc/pki/trust/", LocalPath: "/usr/share/pki/trust/",
			Filename: "anchors/cloud-init-ca-cert-{cert_index}.crt", UpdateCmd: []string{"update-ca-certificates"}}
	case "photon":
		c = CACerts{Path: "/etc/pki/tls/certs/", LocalPath: "/etc/ssl/certs/", Filename: "cloud-init-ca-cert-{cert_index}.pem",
			UpdateCmd: []string{"rehash_ca_certificates.sh"}}
	}
	// disable_default_ca_certs decides by the class name, not the family.
	switch name {
	case "rhel", "photon", "amazon":
		c.RemoveDefaults = "delete"
	case "alpine", "aosc":
		c.RemoveDefaults = "deselect"
	case "debian", "raspberry-pi-os", "ubuntu":
		c.RemoveDefaults = "deselect+debconf"
	}
	return c
}
