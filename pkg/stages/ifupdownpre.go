package stages

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// IfupdownPreDropIn is the runtime drop-in cloudroot gives Debian's
// ifupdown-pre.service for the boot that follows the initramfs.
const IfupdownPreDropIn = "/run/systemd/system/ifupdown-pre.service.d/50-cloudroot.conf"

// ifupdownPreUnits are where Debian's ifupdown ships ifupdown-pre.service.
var ifupdownPreUnits = []string{
	"/usr/lib/systemd/system/ifupdown-pre.service",
	"/lib/systemd/system/ifupdown-pre.service",
	"/etc/systemd/system/ifupdown-pre.service",
}

// ifnameRE is what an interface name may be to go into the drop-in's
// shell command unquoted (a kernel name is at most 15 bytes).
var ifnameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`)

// ifupdownPreWait writes IfupdownPreDropIn into run when the target boots
// ifupdown under systemd and the rendered configuration names physical
// NICs the initramfs saw. Debian's ifupdown-pre runs `udevadm settle`
// whenever /etc/network/interfaces lists an interface besides lo: it
// waits for the whole coldplug (every module udev loads for every device),
// tens of seconds under emulation. cloud-init writes that configuration
// from cloud-init-local, which ifupdown-pre is not ordered against and
// usually loses to, so its boots skip the settle; cloudroot writes it in the
// initramfs, before udev starts, so every first boot paid for it. The
// drop-in waits instead for the interfaces the configuration brings up to
// be known to udev (named, initialized) — what networking.service needs —
// and falls back to the full settle when that fails (no `udevadm wait`,
// a timeout). present maps the MACs of the NICs the initramfs saw to their
// names in the booted system. It returns the interfaces waited for.
func ifupdownPreWait(t, run *target.Root, cfg *netconfig.Config, present netconfig.MACs) ([]string, error) {
	if run == nil || cfg == nil || !slices.ContainsFunc(ifupdownPreUnits, t.Exists) {
		return nil, nil
	}
	names := map[string]bool{}
	for _, n := range present {
		names[n] = true
	}
	var wait []string
	for _, i := range cfg.Interfaces {
		if i.Kind != netconfig.KindPhysical || i.Name == "" {
			continue
		}
		_, byMAC := present.NameByMAC(i.MAC)
		if (i.MAC == "" || !byMAC) && !names[i.Name] {
			continue // a NIC not seen here: leave it to the distribution's settle
		}
		if !ifnameRE.MatchString(i.Name) {
			return nil, nil
		}
		if !slices.Contains(wait, i.Name) {
			wait = append(wait, i.Name)
		}
	}
	if len(wait) == 0 {
		return nil, nil
	}
	var devs []string
	for _, n := range wait {
		devs = append(devs, "/sys/class/net/"+n)
	}
	unit := fmt.Sprintf(`# Written by cloudroot's initramfs for this boot only (it lives in /run).
# The network configuration was written before udev started; wait for the
# interfaces it brings up rather than for the whole coldplug.
[Service]
ExecStart=
ExecStart=/bin/sh -c 'if [ "$CONFIGURE_INTERFACES" = no ]; then exit 0; fi; udevadm wait --timeout=90 %s || udevadm settle'
`, strings.Join(devs, " "))
	if err := run.WriteFile(IfupdownPreDropIn, []byte(unit), 0o644); err != nil {
		return nil, fmt.Errorf("ifupdown-pre drop-in: %w", err)
	}
	return wait, nil
}
