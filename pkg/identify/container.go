package identify

import (
	"io/fs"
	"strings"
)

// ContainerVirt is systemd-detect-virt --container's answer read from a
// running system's root (sys, proc and run are under it): "" when it is not
// a container. As systemd does: /run/systemd/container (systemd-nspawn,
// LXD and Incus write it), PID 1's container= environment, then the
// markers docker and podman leave (/.dockerenv, /run/.containerenv).
func ContainerVirt(host fs.FS) string {
	if host == nil {
		return ""
	}
	if b, err := fs.ReadFile(host, "run/systemd/container"); err == nil {
		if v := strings.TrimSpace(string(b)); v != "" {
			return normalizeContainer(v)
		}
	}
	if b, err := fs.ReadFile(host, "proc/1/environ"); err == nil {
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
				return normalizeContainer(v)
			}
		}
	}
	if _, err := fs.Stat(host, ".dockerenv"); err == nil {
		return "docker"
	}
	if _, err := fs.Stat(host, "run/.containerenv"); err == nil {
		return "podman"
	}
	return ""
}

// normalizeContainer maps a container= value to systemd-detect-virt's name.
func normalizeContainer(v string) string {
	switch v {
	case "systemd-nspawn", "lxc", "lxc-libvirt", "docker", "podman", "rkt", "wsl", "proot", "pouch", "oci":
		return v
	case "incus":
		return "lxc"
	}
	return "container-other"
}
