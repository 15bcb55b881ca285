package distro

// ResolvConfPath is the distro class's resolve_conf_fn, where
// cc_resolv_conf writes: systemd-resolved's configuration on Photon,
// Mariner, Azure Linux and AOSC, /etc/resolv.conf elsewhere.
func (f Facts) ResolvConfPath() string {
	switch f.Variant {
	case "photon", "mariner", "azurelinux", "aosc":
		return "/etc/systemd/resolved.conf"
	}
	return "/etc/resolv.conf"
}
