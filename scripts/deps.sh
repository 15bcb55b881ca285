#!/usr/bin/env bash
# deps.sh — install the Debian packages cloudroot's build and VM tests need.
#
# As root: installs what is missing with apt-get (one retry, after an
# apt-get update: a transient dpkg "cannot stat pathname" failure was seen).
# Not root: lists what is missing with the command to run, and exits 1.
# Exits 0 when everything is installed.
set -euo pipefail

packages=(
	qemu-system-x86 # qemu-system-x86_64
	qemu-system-arm  # qemu-system-aarch64: the arm64 boots (just arm64, just demo arch=arm64)
	qemu-efi-aarch64 # AAVMF: UEFI firmware for them (SMBIOS reaches the arm64 guest through it)
	qemu-utils      # qemu-img
	genisoimage     # NoCloud ISO seeds
	xorriso         # alternative ISO builder
	mtools          # mcopy: vfat seeds without mounting
	dosfstools      # mkfs.vfat
	cpio            # inspecting initramfs images
	busybox-static  # the test rootfs userland
	fdisk           # sfdisk: GPT images
	gdisk           # sgdisk
	kmod            # depmod for the unpacked kernel
	zstd            # zstd initramfs, inspection
	e2fsprogs       # mkfs.ext4 -d, debugfs
	xfsprogs        # mkfs.xfs, xfs_growfs, xfs_info: pkg/disk's root/loop XFS resize test
	btrfs-progs     # mkfs.btrfs, btrfs filesystem resize: pkg/disk's root/loop btrfs resize test
	xz-utils        # vmlinux extraction
	binutils        # readelf: PVH note check
	netcat-openbsd  # nc: QEMU guestfwd=...-cmd:nc 127.0.0.1 PORT
	lvm2            # lvm packed into the non-minimal initramfs profiles (roots on LVM)
	debootstrap     # the Debian 12 test image (scripts/debian-image.sh)
	qemu-user-static # qemu-aarch64: the arm64 image's package scripts (just debian-image arch=arm64)
	squashfs-tools  # mksquashfs: the live root of the netboot tests (integration/netboot_test.go)
	dpkg-dev        # dpkg-scanpackages: the local apt repository (integration/harness/aptrepo.go)
	gnupg           # gpg: signing that repository with a throwaway key
	gpgv            # gpgv: its unit test verifies the signatures as apt does
	ovmf            # OVMF.fd: the Debian image's UEFI boot (integration/debian_selfboot_test.go)
	lintian         # just deb-lint: the Debian package's checks
)

installed() {
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "deps.sh: all ${#packages[@]} packages installed"
	exit 0
fi

cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [[ $(id -u) -ne 0 ]]; then
	echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
	echo "deps.sh: install them as root with:" >&2
	echo "  apt-get update && DEBIAN_FRONTEND=noninteractive ${cmd[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "deps.sh: installing ${missing[*]}"
if ! "${cmd[@]}"; then
	echo "deps.sh: apt-get install failed; apt-get update and one retry" >&2
	apt-get update -q
	"${cmd[@]}"
fi
still=()
for p in "${missing[@]}"; do
	installed "$p" || still+=("$p")
done
if ((${#still[@]} > 0)); then
	echo "deps.sh: still missing after install: ${still[*]}" >&2
	exit 1
fi
echo "deps.sh: installed ${missing[*]}"
