package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NetbootIP is the provisioning server's address inside a PXE-booted VM's
// user network (169.254.0.0/16, as with any GuestFwd): a guestfwd to a
// FileServer on 127.0.0.1.
const NetbootIP = "169.254.0.100"

// IPXEScriptName is the TFTP boot file a PXELab writes.
const IPXEScriptName = "boot.ipxe"

// PXELab is one network-boot setup: a TFTP directory holding an iPXE
// script, and an HTTP server on 127.0.0.1 with the kernel, the initramfs
// and whatever else the boot fetches (seeds, root images).
type PXELab struct {
	// Dir is the TFTP root.
	Dir string
	// Server serves the files; the guest reaches it at http://NetbootIP/.
	Server *FileServer
	// Script is the iPXE script's text.
	Script string
}

// IPXEScript is an iPXE script that loads kernel and initramfs from base
// (http://…) and boots the kernel with args. "${net0/mac:hexhyp}" in args
// is expanded by iPXE (BOOTIF=01-${net0/mac:hexhyp}, as pxelinux's
// IPAPPEND 2 gives).
func IPXEScript(base string, args []string) string {
	return "#!ipxe\n" +
		"echo cloudroot lab: booting ${net0/mac} from " + base + "\n" +
		"kernel " + base + "/vmlinuz " + strings.Join(args, " ") + "\n" +
		"initrd " + base + "/initramfs.cpio.gz\n" +
		"boot\n"
}

// NetbootArgs are the kernel arguments every lab boot has before the
// caller's: the console, power-off on a fatal error, the boot NIC and DHCP.
var NetbootArgs = []string{"console=ttyS0", "panic=-1", "cloudroot.onfail=poweroff", "BOOTIF=01-${net0/mac:hexhyp}", "ip=dhcp"}

// NewPXELab serves files (by URL path) plus kernel (a bzImage: iPXE does
// not boot a bare vmlinux) as /vmlinuz and initramfs as
// /initramfs.cpio.gz, and writes the iPXE script booting them with
// NetbootArgs and args into a new directory under dir. Close it when done.
func NewPXELab(dir, kernel, initramfs string, files map[string][]byte, args []string) (*PXELab, error) {
	k, err := os.ReadFile(kernel)
	if err != nil {
		return nil, fmt.Errorf("pxe lab: %w", err)
	}
	i, err := os.ReadFile(initramfs)
	if err != nil {
		return nil, fmt.Errorf("pxe lab: %w", err)
	}
	all := map[string][]byte{"/vmlinuz": k, "/initramfs.cpio.gz": i}
	for p, b := range files {
		all[p] = b
	}
	tftp, err := os.MkdirTemp(dir, "tftp-")
	if err != nil {
		return nil, fmt.Errorf("pxe lab: %w", err)
	}
	l := &PXELab{Dir: tftp, Script: IPXEScript("http://"+NetbootIP, append(append([]string{}, NetbootArgs...), args...))}
	if err := os.WriteFile(filepath.Join(tftp, IPXEScriptName), []byte(l.Script), 0o644); err != nil {
		return nil, fmt.Errorf("pxe lab: %w", err)
	}
	if l.Server, err = ServeFiles(all); err != nil {
		return nil, err
	}
	return l, nil
}

// Options are the boot options of a network boot from the lab (add Disk,
// Timeout, Output...).
func (l *PXELab) Options() BootOptions {
	return BootOptions{
		PXE:      &PXE{TFTPDir: l.Dir, BootFile: IPXEScriptName},
		GuestFwd: []GuestFwd{{GuestIP: NetbootIP, GuestPort: 80, HostPort: l.Server.Port()}},
	}
}

// Close stops the HTTP server.
func (l *PXELab) Close() error { return l.Server.Close() }

// SquashRootfs packs the root filesystem of a disk image (partition 1, or
// the whole image) into a squashfs under dir: debugfs copies the tree out
// (owners kept when run as root), mksquashfs packs it. It returns the
// squashfs's path.
func SquashRootfs(image, dir string) (string, error) {
	if miss := HaveTools("debugfs", "mksquashfs"); miss != nil {
		return "", fmt.Errorf("squashfs root: missing %s (squashfs-tools, e2fsprogs)", strings.Join(miss, ", "))
	}
	im, err := OpenImage(image)
	if err != nil {
		return "", err
	}
	tree, err := os.MkdirTemp(dir, "tree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	if out, err := exec.Command("debugfs", "-R", "rdump / "+tree, im.spec()).CombinedOutput(); err != nil {
		return "", fmt.Errorf("debugfs rdump: %w: %s", err, out)
	}
	// rdump of / lands in tree/ itself or in one subdirectory, by version.
	src := tree
	if ents, _ := os.ReadDir(tree); len(ents) == 1 && ents[0].IsDir() {
		src = filepath.Join(tree, ents[0].Name())
	}
	if _, err := os.Stat(filepath.Join(src, "sbin")); err != nil {
		return "", errors.New("squashfs root: debugfs rdump gave no /sbin")
	}
	out := filepath.Join(dir, "rootfs.squashfs")
	if b, err := exec.Command("mksquashfs", src, out, "-noappend", "-quiet", "-comp", "gzip").CombinedOutput(); err != nil {
		return "", fmt.Errorf("mksquashfs: %w: %s", err, b)
	}
	return out, nil
}
