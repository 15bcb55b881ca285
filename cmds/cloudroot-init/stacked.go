package main

import (
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// What cloudroot-init says about roots it cannot open: md RAID arrays are
// assembled (pkg/mdraid) and LVM volume groups activated (when the image
// carries lvm), so a member left over means that failed; LUKS volumes are
// recognized but not unlocked (docs/hardware.md).

// containerKinds describes bootenv's container types for console messages.
var containerKinds = map[string]string{
	bootenv.TypeLVM:  "an LVM physical volume",
	bootenv.TypeMD:   "an md RAID member",
	bootenv.TypeLUKS: "a LUKS encrypted volume",
}

// containerError is the fatal error for a root= that names a container
// itself (root=UUID= of a LUKS header or a RAID member).
func containerError(d bootenv.Device) error {
	return fmt.Errorf("%s is %s (%s uuid=%q), not a filesystem: this initramfs does not %s", d.Path,
		containerKinds[d.FS.Type], d.FS.Type, d.FS.UUID, containerVerb(d.FS.Type))
}

func containerVerb(t string) string {
	switch t {
	case bootenv.TypeLVM:
		return "have its volume group active (see the LVM lines above; the image needs lvm: cloudroot-mkinitramfs -program /usr/sbin/lvm)"
	case bootenv.TypeMD:
		return "assemble this array (see the md lines above)"
	default:
		return "unlock LUKS volumes; boot with an unencrypted root"
	}
}

// containerHint explains a root that was not found when the command line
// asks for LVM, md or LUKS (root=/dev/mapper/..., /dev/md*, rd.lvm.*,
// rd.md.*, rd.luks.*) or the machine has container members: one line per
// reason, each prefixed "cloudroot-init: ".
func containerHint(get func(string) (string, bool), devs []bootenv.Device) string {
	var lines []string
	root, _ := get("root")
	switch {
	case strings.HasPrefix(root, "/dev/mapper/") || strings.HasPrefix(root, "/dev/dm-"):
		lines = append(lines, fmt.Sprintf("root=%s is a device-mapper device (LVM or LUKS): LVM volume groups are activated only when the image carries lvm, LUKS volumes are not unlocked", root))
	case strings.HasPrefix(root, "/dev/md"):
		lines = append(lines, fmt.Sprintf("root=%s names an md RAID array by device: cloudroot-init assembles arrays as /dev/md127, md126...; name the root by UUID= or LABEL= of its filesystem", root))
	}
	if v, ok := get("rd.lvm.lv"); ok {
		lines = append(lines, fmt.Sprintf("rd.lvm.lv=%s: only the logical volumes named by rd.lvm.lv= are activated (see the LVM lines above)", v))
	}
	for _, k := range []string{"rd.luks.uuid", "rd.luks.name"} {
		if v, ok := get(k); ok {
			lines = append(lines, fmt.Sprintf("%s=%s asks for %s: not supported by this initramfs", k, v, strings.SplitN(k, ".", 3)[1]))
		}
	}
	for _, d := range devs {
		if kind, ok := containerKinds[d.FS.Type]; ok {
			lines = append(lines, fmt.Sprintf("%s is %s (%s uuid=%q): the root may be inside it; this initramfs does not %s", d.Path, kind, d.FS.Type, d.FS.UUID, containerVerb(d.FS.Type)))
		}
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString("cloudroot-init: " + l + "\n")
	}
	return sb.String()
}
