package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// lvmRequest is what the kernel command line asks of LVM activation, with
// dracut's keys (dracut.cmdline(7)): rd.lvm=0 turns activation off;
// rd.lvm.vg=VG activates only the named volume groups; rd.lvm.lv=VG/LV
// activates only the named logical volumes. Each key may be given several
// times (and, here, as a comma-separated list); the old spellings
// rd_LVM_VG= and rd_LVM_LV= count too.
type lvmRequest struct {
	Off bool
	VGs []string
	LVs []string
	// Bad are rd.lvm.lv= values that do not name VG/LV; they are left
	// out of the activation and reported.
	Bad []string
}

// parseLVMArgs reads the LVM keys through all, which returns every value of
// a key in command-line order (bootenv.Cmdline.All).
func parseLVMArgs(all func(string) []string) lvmRequest {
	var r lvmRequest
	for _, v := range all("rd.lvm") {
		r.Off = v == "0" || v == "no" || v == "false"
	}
	for _, k := range []string{"rd.lvm.vg", "rd_LVM_VG"} {
		for _, v := range all(k) {
			r.VGs = appendUnique(r.VGs, splitList(strings.TrimPrefix(v, "/dev/"))...)
		}
	}
	for _, k := range []string{"rd.lvm.lv", "rd_LVM_LV"} {
		for _, v := range all(k) {
			for _, lv := range splitList(v) {
				lv = strings.TrimPrefix(lv, "/dev/")
				vg, name, ok := strings.Cut(lv, "/")
				if !ok || vg == "" || name == "" || strings.Contains(name, "/") {
					r.Bad = append(r.Bad, lv)
					continue
				}
				r.LVs = appendUnique(r.LVs, lv)
			}
		}
	}
	return r
}

// commands returns the lvm invocations (arguments after the program name)
// that carry the request out, as dracut's lvm_scan does: `lvchange -ay -K`
// of the listed logical volumes when there are any, and `vgchange -ay` of
// the listed volume groups (or of all of them when neither key is given).
// config is passed with --config to each. Off yields none.
func (r lvmRequest) commands(config string) [][]string {
	if r.Off {
		return nil
	}
	var cmds [][]string
	if len(r.LVs) > 0 {
		// -K: activate LVs flagged "activation skip" too, as dracut
		// does for an LV named on the command line.
		cmds = append(cmds, append([]string{"lvchange", "-ay", "-K", "--sysinit", "--config", config}, r.LVs...))
	}
	if len(r.LVs) == 0 || len(r.VGs) > 0 {
		cmds = append(cmds, append([]string{"vgchange", "-ay", "--sysinit", "--config", config}, r.VGs...))
	}
	return cmds
}

// String describes the request for the console.
func (r lvmRequest) String() string {
	switch {
	case r.Off:
		return "rd.lvm=0: not activated"
	case len(r.LVs) == 0 && len(r.VGs) == 0:
		return "all volume groups"
	}
	var parts []string
	if len(r.VGs) > 0 {
		parts = append(parts, "volume groups "+strings.Join(r.VGs, ","))
	}
	if len(r.LVs) > 0 {
		parts = append(parts, "logical volumes "+strings.Join(r.LVs, ","))
	}
	return strings.Join(parts, " and ")
}

// badLVError describes rd.lvm.lv= values that were ignored.
func badLVError(bad []string) error {
	return fmt.Errorf("rd.lvm.lv=%s: not of the form VG/LV, ignored", strings.Join(bad, ","))
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func appendUnique(list []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// dmNames returns the names of the device-mapper devices under the block
// class directory (dm-N/dm/name), sorted.
func dmNames(classDir string) []string {
	matches, _ := filepath.Glob(filepath.Join(classDir, "dm-*", "dm", "name"))
	var names []string
	for _, m := range matches {
		if raw, err := os.ReadFile(m); err == nil {
			names = append(names, strings.TrimSpace(string(raw)))
		}
	}
	slices.Sort(names)
	return names
}
