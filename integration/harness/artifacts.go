// Package harness boots cloudroot's build artifacts in QEMU and inspects the
// disk images they leave behind, without root: QEMU runs under TCG (KVM is
// optional), seeds are made with genisoimage or mkfs.vfat+mtools, and the
// ext4 root is read and written with e2fsprogs' debugfs at the partition's
// byte offset.
//
// It is shared by the integration tests (package integration) and the
// cloudroot-lab command (demo, bench).
//
// Network rule: every VM gets exactly one network, `-netdev
// user,id=n0,restrict=on`, which cannot reach anything outside the guest.
package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvBuild names the build directory; it defaults to <repo>/build.
const EnvBuild = "CLOUDROOT_BUILD"

// Artifacts are the files `just agent kernel initramfs rootfs` produces.
type Artifacts struct {
	// Arch is the architecture the artifacts are built for, read from
	// the kernel's release (kernel/version: "6.1.0-56-arm64" is arm64).
	Arch string
	// Dir is the build directory.
	Dir string
	// Kernel is the kernel to boot: the PVH vmlinux when it exists (it skips
	// the ~2.7 s TCG decompression), else the bzImage vmlinuz.
	Kernel string
	// Vmlinuz is the compressed kernel, whether or not it exists.
	Vmlinuz string
	// Vmlinux is the PVH ELF kernel, whether or not it exists.
	Vmlinux   string
	Initramfs string
	// Rootfs is the GPT raw disk whose partition 1 is the ext4 root.
	Rootfs string
	// Debian is the Debian 12 + systemd image of `just debian-image`
	// (build/debian-12.img), the same layout as Rootfs.
	Debian string
	// DebianTrixie is the Debian 13 image of `just debian-image
	// suite=trixie` (build/debian-13.img).
	DebianTrixie string
	// Agent is the full cloudroot agent (build/cloudroot-agent, installed
	// as /usr/lib/cloudroot/cloudroot-agent).
	Agent string
	// Front is the front binary (build/cloudroot, installed as
	// /usr/bin/cloudroot and cloud-init): --version and status, the rest
	// exec'd in Agent.
	Front string
	// Init is the initramfs /init binary (build/cloudroot-init).
	Init string
}

// RepoRoot is the nearest directory at or above the working directory that
// holds a go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository: no go.mod in any parent of the working directory")
		}
		dir = parent
	}
}

// BuildDir is $CLOUDROOT_BUILD, else <repo>/build.
func BuildDir() (string, error) {
	if d := os.Getenv(EnvBuild); d != "" {
		return filepath.Abs(d)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "build"), nil
}

// Discover finds the artifacts in BuildDir. Missing files are not an error
// here: ask Missing.
func Discover() (Artifacts, error) {
	dir, err := BuildDir()
	if err != nil {
		return Artifacts{}, err
	}
	return ArtifactsIn(dir), nil
}

// ArtifactsIn lays the artifact paths out under dir.
func ArtifactsIn(dir string) Artifacts {
	a := Artifacts{
		Dir:          dir,
		Vmlinuz:      filepath.Join(dir, "kernel", "vmlinuz"),
		Vmlinux:      filepath.Join(dir, "kernel", "vmlinux"),
		Initramfs:    filepath.Join(dir, "initramfs.cpio.gz"),
		Rootfs:       filepath.Join(dir, "rootfs.img"),
		Debian:       filepath.Join(dir, "debian-12.img"),
		DebianTrixie: filepath.Join(dir, "debian-13.img"),
		Agent:        filepath.Join(dir, "cloudroot-agent"),
		Front:        filepath.Join(dir, "cloudroot"),
		Init:         filepath.Join(dir, "cloudroot-init"),
	}
	a.Arch = ArchAMD64
	if v, err := os.ReadFile(filepath.Join(dir, "kernel", "version")); err == nil {
		a.Arch = archFromKernelVersion(string(v))
	}
	a.Kernel = a.Vmlinuz
	if isFile(a.Vmlinux) {
		a.Kernel = a.Vmlinux
	}
	return a
}

// Missing lists the artifacts a boot needs (kernel, initramfs, rootfs) that
// do not exist.
func (a Artifacts) Missing() []string {
	var miss []string
	for _, p := range []string{a.Kernel, a.Initramfs, a.Rootfs} {
		if !isFile(p) {
			miss = append(miss, p)
		}
	}
	return miss
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Tools lists the host programs a boot and the inspection need that are not
// on PATH. Seed making needs genisoimage (or xorriso) for ISO and mkfs.vfat +
// mcopy for FAT; those are checked by MakeSeed itself.
func Tools() []string {
	var miss []string
	for _, t := range []string{QEMU, "debugfs"} {
		if _, err := lookPath(t); err != nil {
			miss = append(miss, t)
		}
	}
	return miss
}
