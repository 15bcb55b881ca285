package netconfig

// Choosing the renderer as cloud-init does: the configured priority list
// (system_info.network.renderers), else the one cloud.cfg's template gives
// the distro, else cloud-init's default; the first renderer available on the
// target wins. Availability is judged from files on the target, since the
// initramfs cannot run the target's systemctl or netplan.

import "strings"

// DefaultPriority is cloud-init's renderer order when nothing is configured
// (without the BSD renderers).
var DefaultPriority = []string{RendererENI, RendererSysconfig, RendererNetplan, RendererNetworkManager, RendererNetworkd}

// rhelFamily are the ids cloud.cfg.tmpl treats as RHEL.
var rhelFamily = []string{
	"almalinux", "centos", "cloudlinux", "eurolinux", "miraclelinux", "rhel", "rocky", "virtuozzo",
	"ol", "openeuler", "navix",
}

// DistroPriority returns the renderer priority cloud.cfg.tmpl sets for a
// distro (by os-release ID, then ID_LIKE), or DefaultPriority.
func DistroPriority(distroID string, idLike []string) []string {
	for _, id := range append([]string{distroID}, idLike...) {
		if p := distroPriority(strings.ToLower(id)); p != nil {
			return p
		}
	}
	return DefaultPriority
}

func distroPriority(id string) []string {
	switch id {
	case "debian":
		return []string{RendererNetplan, RendererENI, RendererNetworkd}
	case "ubuntu", "linuxmint", "mint", "pop":
		return []string{RendererNetplan, RendererENI, RendererSysconfig}
	case "fedora":
		return []string{RendererNetplan, RendererNetworkManager, RendererNetworkd, RendererSysconfig, RendererENI}
	case "alpine":
		return []string{RendererENI}
	case "azurelinux":
		return []string{RendererNetplan, RendererNetworkd, RendererNetworkManager}
	case "mariner", "photon":
		return []string{RendererNetworkd}
	case "openmandriva":
		return []string{RendererNetworkManager, RendererNetworkd}
	case "raspbian":
		return []string{RendererNetplan, RendererNetworkManager}
	}
	for _, r := range rhelFamily {
		if id == r {
			return []string{RendererENI, RendererNetplan, RendererNetworkManager, RendererSysconfig, RendererNetworkd}
		}
	}
	return nil
}

// sysconfigVariants are cloud-init's sysconfig KNOWN_DISTROS.
var sysconfigVariants = []string{
	"almalinux", "centos", "cloudlinux", "eurolinux", "fedora", "miraclelinux", "openeuler",
	"openmandriva", "rhel", "rocky", "suse", "virtuozzo", "ol", "opensuse", "sles", "navix",
}

// Select returns the renderer cloud-init would choose for the target, or ""
// when none is available. has reports whether a path exists on the target;
// it may be given a glob pattern (filepath.Match syntax). configured is
// system_info.network.renderers, if set.
func Select(distroID string, idLike []string, has func(path string) bool, configured []string) string {
	prio := configured
	if len(prio) == 0 {
		prio = DistroPriority(distroID, idLike)
	}
	for _, r := range prio {
		if Available(r, distroID, idLike, has) {
			return r
		}
	}
	return ""
}

func anyOf(has func(string) bool, paths ...string) bool {
	for _, p := range paths {
		if has(p) {
			return true
		}
	}
	return false
}

// binary reports whether a program is in one of dirs on the target.
func binary(has func(string) bool, name string, dirs ...string) bool {
	for _, d := range dirs {
		if has(d + "/" + name) {
			return true
		}
	}
	return false
}

var allBinDirs = []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// Available reports whether renderer r can be used on the target, with
// cloud-init's tests:
//   - eni: ifquery, ifup, ifdown in /sbin or /usr/sbin, and /etc/network/interfaces;
//   - netplan: netplan in /usr/sbin or /sbin;
//   - networkd: the systemd-networkd daemon (cloud-init asks only for ip and
//     systemctl, which every systemd system has);
//   - network-manager: /etc/NetworkManager/NetworkManager.conf, nmcli, and on
//     systemd systems NetworkManager.service enabled;
//   - sysconfig: a RHEL/SUSE-family distro with ifup/ifdown and
//     network-functions or /etc/sysconfig/config, or NetworkManager's
//     ifcfg-rh plugin.
func Available(r, distroID string, idLike []string, has func(string) bool) bool {
	switch r {
	case RendererENI:
		for _, b := range []string{"ifquery", "ifup", "ifdown"} {
			if !binary(has, b, "/sbin", "/usr/sbin") {
				return false
			}
		}
		return has("/etc/network/interfaces")
	case RendererNetplan:
		return binary(has, "netplan", "/usr/sbin", "/sbin")
	case RendererNetworkd:
		return anyOf(has, "/usr/lib/systemd/systemd-networkd", "/lib/systemd/systemd-networkd")
	case RendererNetworkManager:
		if !has("/etc/NetworkManager/NetworkManager.conf") || !binary(has, "nmcli", allBinDirs...) {
			return false
		}
		if anyOf(has, "/usr/lib/systemd/systemd", "/lib/systemd/systemd") {
			return anyOf(has,
				"/etc/systemd/system/multi-user.target.wants/NetworkManager.service",
				"/etc/systemd/system/network-online.target.wants/NetworkManager-wait-online.service",
				"/etc/systemd/system/dbus-org.freedesktop.nm-dispatcher.service")
		}
		return true
	case RendererSysconfig:
		if !isSysconfigVariant(distroID, idLike) {
			return false
		}
		if binary(has, "ifup", "/sbin", "/usr/sbin") && binary(has, "ifdown", "/sbin", "/usr/sbin") &&
			anyOf(has, "/etc/sysconfig/network-scripts/network-functions", "/etc/sysconfig/config") {
			return true
		}
		return anyOf(has,
			"/usr/lib*/NetworkManager/*/libnm-settings-plugin-ifcfg-rh.so",
			"/usr/lib*/NetworkManager/libnm-settings-plugin-ifcfg-rh.so")
	}
	return false
}

func isSysconfigVariant(id string, idLike []string) bool {
	for _, x := range append([]string{id}, idLike...) {
		x = strings.ToLower(x)
		for _, v := range sysconfigVariants {
			if x == v || strings.HasPrefix(x, "opensuse") {
				return true
			}
		}
	}
	return false
}
