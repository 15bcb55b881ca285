package stages

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
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
var ifnameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`) })

// NICRename is a NIC the initramfs can give, before switch_root, the name
// the booted system's udev would give it: From is the kernel's name, To
// the booted system's (the configuration's set-name, else the predictable
// name), MAC identifies the device.
type NICRename struct {
	From, To, MAC string
}

// IfupdownPre is the drop-in's plan: the NICs ifupdown-pre waits for and
// the renames that let it proceed at once.
type IfupdownPre struct {
	Wait    []string
	Renames []NICRename
}

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
// names in the booted system; links are those NICs as the initramfs sees
// them; written are the files the renderer wrote. It returns the plan,
// including the renames RenameNICs may apply (see renamesFor).
func ifupdownPreWait(t, run *target.Root, cfg *netconfig.Config, present netconfig.MACs, links []bootenv.NetLink, policy, written []string) (*IfupdownPre, error) {
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
		if !ifnameRE().MatchString(i.Name) {
			return nil, nil
		}
		if !slices.Contains(wait, i.Name) {
			wait = append(wait, i.Name)
		}
	}
	if len(wait) == 0 {
		return nil, nil
	}
	p := &IfupdownPre{Wait: wait, Renames: renamesFor(t, cfg, present, links, policy, written, wait)}
	if err := writeIfupdownPre(run, p.Wait, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// writeIfupdownPre writes the drop-in: ready NICs already carry their final
// name (renamed in the initramfs) and are waited for only to exist; the
// others until udev has named and initialized them.
func writeIfupdownPre(run *target.Root, wait, ready []string) error {
	var now, later []string
	for _, n := range wait {
		if slices.Contains(ready, n) {
			now = append(now, "/sys/class/net/"+n)
		} else {
			later = append(later, "/sys/class/net/"+n)
		}
	}
	var cmds []string
	if len(now) > 0 {
		cmds = append(cmds, "udevadm wait --initialized=false --timeout=90 "+strings.Join(now, " "))
	}
	if len(later) > 0 {
		cmds = append(cmds, "udevadm wait --timeout=90 "+strings.Join(later, " "))
	}
	how := "wait for the\n# interfaces it brings up rather than for the whole coldplug."
	if len(now) > 0 {
		how += "\n# " + strings.Join(ready, ", ") + " got the booted system's name in the initramfs: they\n# need only exist."
	}
	unit := fmt.Sprintf(`# Written by cloudroot's initramfs for this boot only (it lives in /run).
# The network configuration was written before udev started; %s
[Service]
ExecStart=
ExecStart=/bin/sh -c 'if [ "$CONFIGURE_INTERFACES" = no ]; then exit 0; fi; %s || udevadm settle'
`, how, strings.Join(cmds, " && "))
	if err := run.WriteFile(IfupdownPreDropIn, []byte(unit), 0o644); err != nil {
		return fmt.Errorf("ifupdown-pre drop-in: %w", err)
	}
	return nil
}

// renamesFor lists the NICs of wait whose booted-system name differs from
// the initramfs's, for RenameNICs. It renames only what the booted system's
// udev would rename the same way and then leave alone: its net_setup_link
// runs with a NamePolicy that keeps a name userspace gave ("keep", Debian's
// default), and no .link file or udev rule of the target's own (not written
// by this boot's renderer) could name a NIC otherwise. A name that another
// NIC holds now, or that two NICs would get, is not given (no swaps).
func renamesFor(t *target.Root, cfg *netconfig.Config, present netconfig.MACs, links []bootenv.NetLink, policy, written, wait []string) []NICRename {
	if !slices.Contains(policy, "keep") || ownNaming(t, written) {
		return nil
	}
	current := map[string]bool{}
	for _, l := range links {
		current[l.Name] = true
	}
	var out []NICRename
	taken := map[string]bool{}
	for _, l := range links {
		if l.Name == "lo" || l.MAC == "" || l.Virtual || l.Bridge || l.Bond {
			continue
		}
		to, ok := present.NameByMAC(l.MAC)
		if !ok {
			continue
		}
		for _, i := range cfg.Interfaces {
			if i.Kind == netconfig.KindPhysical && i.Rename && strings.EqualFold(i.MAC, l.MAC) && i.Name != "" {
				to = i.Name
			}
		}
		if to == l.Name || !slices.Contains(wait, to) {
			continue
		}
		if current[to] || taken[to] {
			return nil
		}
		taken[to] = true
		out = append(out, NICRename{From: l.Name, To: to, MAC: l.MAC})
	}
	return out
}

// ownNaming reports whether the target names NICs by its own .link files
// or udev NAME= rules (any not among written).
func ownNaming(t *target.Root, written []string) bool {
	for _, g := range []string{"/etc/systemd/network/*.link", "/run/systemd/network/*.link", "/etc/udev/rules.d/*.rules"} {
		ms, _ := t.Glob(g)
		for _, m := range ms {
			if slices.Contains(written, m) {
				continue
			}
			if path.Ext(m) == ".link" {
				return true
			}
			if b, err := t.ReadFile(m); err == nil && strings.Contains(string(b), "NAME=") {
				return true
			}
		}
	}
	return false
}

// RenameNICs gives the NICs of plan their booted-system names with rename
// (the initramfs calls it once it is done with the network, just before
// switch_root; rename must refuse a NIC that is up or whose MAC is not
// MAC) and rewrites the drop-in so ifupdown-pre need not wait for udev to
// initialize what was renamed. A failed rename leaves that NIC to udev, as
// before. It returns the names given.
func RenameNICs(run *target.Root, plan *IfupdownPre, rename func(NICRename) error) ([]string, error) {
	if plan == nil || len(plan.Renames) == 0 || rename == nil {
		return nil, nil
	}
	var done []string
	var errs []error
	for _, r := range plan.Renames {
		if err := rename(r); err != nil {
			errs = append(errs, fmt.Errorf("rename %s to %s: %w", r.From, r.To, err))
			continue
		}
		done = append(done, r.To)
	}
	if len(done) > 0 {
		if err := writeIfupdownPre(run, plan.Wait, done); err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}
