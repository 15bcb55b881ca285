#!/usr/bin/env bash
# debian-image.sh — build build/debian-12.img: a Debian 12 (bookworm) cloud
# image provisioned by cloudroot instead of cloud-init.
#
# Two parts:
#  1. The slow part, cached outside the clone: debootstrap a Debian 12 root
#     (systemd, udev, openssh-server, sudo, apt, chrony, locales, ifupdown,
#     isc-dhcp-client, iproute2 — what Debian's genericcloud image carries —
#     GRUB's grub2-common, grub-pc-bin, grub-efi-amd64-bin and
#     grub-cloud-amd64 (grub-install on GRUB upgrades, see below), and the
#     linux-image package whose version is build/kernel/version, so
#     /lib/modules agrees with the kernel the cloudroot initramfs was built
#     for). The root is kept as
#       ${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot}/debian-12-<key>.tar.zst
#     where <key> hashes everything the root depends on: the text of
#     build_root below, the package list, suite, mirrors and kernel version.
#     A change to any of them builds a new root; nothing else does.
#  2. Each run (seconds): unpack the root into a temp dir, install
#     cloudroot's Debian package (build/cloudroot_*_amd64.deb, `just deb`)
#     with apt-get, as a user would — it takes initramfs-tools' place and
#     its postinst builds /boot/initrd.img-<kver> with the driver profile
#     DEBIAN_IMAGE_PROFILE, recorded in /etc/cloudroot/initramfs.conf.d —
#     and write the self-booting disk of Debian's cloud images: GPT with a
#     BIOS boot partition (14, GRUB i386-pc core.img), an EFI system
#     partition (15, GRUB x86_64-efi at \EFI\BOOT\BOOTX64.EFI, the
#     removable path: no NVRAM) and the ext4 root labelled cloudimg-rootfs
#     (1, last, grown on first boot; the ESP mounted at /boot/efi, where
#     grub-cloud-amd64's grub-install puts shim and GRUB when a GRUB
#     package is upgraded), GRUB's menu in /boot/grub/grub.cfg
#     (update-grub in the booted image regenerates it). No loop mounts:
#     mkfs.ext4 -d, mtools, and GRUB's boot sectors written as
#     grub-bios-setup would.
#
# The package sources are the build machine's own: the Debian archive and
# security URIs are read from /etc/apt/sources.list and
# /etc/apt/sources.list.d/*.{list,sources} (DEBIAN_MIRROR and
# DEBIAN_SECURITY_MIRROR override them).
#
# Needs root (debootstrap, chroot, and file owners in the image), the Debian
# packages debootstrap, zstd, fdisk, gdisk, dosfstools, mtools, e2fsprogs,
# and the package plus build/kernel (just deb kernel).
#
# arm64 (ARCH=arm64, `just debian-image arch=arm64`, BUILD_DIR=build/arm64):
# the same root from Debian's arm64 packages, with GRUB arm64-efi at
# \EFI\BOOT\BOOTAA64.EFI (UEFI only: no BIOS boot partition) and the
# console on ttyAMA0 (the PL011 of QEMU's virt machine and of most arm64
# clouds). debootstrap's second stage, the kernel's and cloudroot's
# maintainer scripts and grub-mkimage are arm64 programs: they run through
# qemu-user (the Debian package qemu-user-static), registered with a
# binfmt_misc of their own, mounted in a private user namespace (Linux 6.7
# or later), so the build machine's binfmt_misc is neither needed nor
# touched. The cached root is debian-12-arm64-<key>.tar.zst.
#
# The cloud-init twin (DEBIAN_IMAGE_VARIANT=cloud-init, for `just
# bench-vs-cloud-init`): the same root plus Debian's cloud-init package and
# an initramfs-tools initrd, without cloudroot: build/debian-12-cloud-init.img
# and build/debian-12-cloud-init.initrd (cloud-init runs in the booted root,
# so it boots with the distribution's own initramfs).
#
# The bare twin (DEBIAN_IMAGE_VARIANT=bare, the bench's third image): the
# same root with neither cloud-init nor cloudroot, booted with its own
# initramfs-tools initrd (build/debian-12-bare.img + .initrd), the bench
# seed's end state baked in by DEBIAN_IMAGE_BAKE: a script that
# integration/harness.BareTwinScript generated from that seed, run chrooted
# (users, keys, files, network config, oneshot units for bootcmd, runcmd
# and power_state). The physical limit of "provision this machine".
#
# Debian 13 (DEBIAN_IMAGE_SUITE=trixie, build/debian-13.img): the same
# two parts with trixie's package set as Debian's official genericcloud image
# has it (debian-cloud-images, config_space/13 package_config/SYSTEM_BOOT with
# TIME_SYSTEMD): netplan.io with systemd-networkd and systemd-resolved (no
# ifupdown), systemd-timesyncd (no chrony), and trixie's own
# linux-image-amd64 installed by debootstrap (its version is read from the
# root's /lib/modules, not build/kernel/version).
#
# Usage: scripts/debian-image.sh [OUT]     (default build/debian-12.img,
#                                           or build/debian-12-cloud-init.img;
#                                           debian-13* for trixie)
# Environment:
#   DEBIAN_IMAGE_SUITE=bookworm    or trixie
#   DEBIAN_IMAGE_VARIANT=cloudroot  or cloud-init (the twin) or bare
#   DEBIAN_IMAGE_BAKE=file         bare: the end-state script (see above)
#   ARCH=amd64                     or arm64 (the root's and kernel's architecture)
#   DEB=build/cloudroot_V_amd64.deb the package (default: the newest in build/)
#   DEBIAN_IMAGE_PROFILE=minimal    the initramfs's driver profile
#   IMAGE_SIZE_MB=2048             disk size (sparse)
#   CLOUDROOT_CACHE=dir            cache directory (see above)
#   DEBIAN_MIRROR=url              Debian archive (default: from apt's sources)
#   DEBIAN_SECURITY_MIRROR=url     Debian security archive (same)
#   KERNEL_DEB=file                the linux-image .deb (default: the one
#                                  kernel.sh downloaded, else apt-get download)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
variant=${DEBIAN_IMAGE_VARIANT:-cloudroot}
suite=${DEBIAN_IMAGE_SUITE:-bookworm}
case $suite in
bookworm) release=12 ;;
trixie) release=13 ;;
*) printf 'debian-image.sh: error: DEBIAN_IMAGE_SUITE=%s: want bookworm or trixie\n' "$suite" >&2; exit 1 ;;
esac
case $variant in
cloudroot) out=${1:-$build/debian-$release.img} ;;
cloud-init) out=${1:-$build/debian-$release-cloud-init.img} ;;
bare) out=${1:-$build/debian-$release-bare.img} ;;
*) printf 'debian-image.sh: error: DEBIAN_IMAGE_VARIANT=%s: want cloudroot, cloud-init or bare\n' "$variant" >&2; exit 1 ;;
esac
profile=${DEBIAN_IMAGE_PROFILE:-minimal}
deb_pkg=${DEB:-}
if [[ $variant == cloudroot && -z $deb_pkg ]]; then
	deb_pkg=$(ls -t "$build"/cloudroot_*_"${ARCH:-amd64}".deb 2>/dev/null | head -n 1 || true)
fi
arch=${ARCH:-amd64}
size_mb=${IMAGE_SIZE_MB:-2048}
cache=${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot}
PATH=$PATH:/usr/sbin:/sbin

log() { printf 'debian-image.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# What differs per architecture: GRUB's platforms and packages, the UEFI
# boot image at the removable path, the serial console and GRUB's terminal
# (on arm64 the firmware's console is the serial port), kernel arguments,
# and qemu-user's name for the architecture when it is not the host's.
case $arch in
amd64)
	grub_platforms=(i386-pc x86_64-efi) grub_pkgs=(grub-pc-bin grub-efi-amd64-bin)
	efi_image=BOOTX64.EFI console=ttyS0,115200 cmdline_extra=" no_timer_check"
	grub_serial=yes qemu_arch=x86_64 grub_cloud=grub-cloud-amd64
	;;
arm64)
	grub_platforms=(arm64-efi) grub_pkgs=(grub-efi-arm64-bin)
	efi_image=BOOTAA64.EFI console=ttyAMA0 cmdline_extra=""
	grub_serial=no qemu_arch=aarch64 grub_cloud=
	;;
*) die "ARCH=$arch: want amd64 or arm64" ;;
esac
foreign=no
[[ $arch == "$(dpkg --print-architecture)" ]] || foreign=yes

# The image's packages beyond debootstrap's minbase. kmod, linux-base and
# initramfs-tools are what the linux-image package depends on.
packages=(
	systemd systemd-sysv udev dbus
	openssh-server sudo apt ca-certificates
	locales
	iproute2 netbase
	e2fsprogs procps less adduser
	kmod linux-base initramfs-tools
)
# What differs per release: time sync, the network stack, the kernel.
# bookworm: chrony and ifupdown with isc-dhcp-client; the kernel is
# build/kernel's. trixie (genericcloud's SYSTEM_BOOT + TIME_SYSTEMD):
# netplan.io rendering for systemd-networkd, systemd-resolved with its NSS
# modules, polkitd (networkd sets hostnames through it), libpam-systemd,
# systemd-timesyncd, zstd, and linux-image-amd64 (own_kernel).
own_kernel=
case $suite in
bookworm) packages+=(chrony ifupdown isc-dhcp-client) ;;
trixie)
	packages+=(systemd-timesyncd netplan.io systemd-resolved libnss-resolve libnss-myhostname
		polkitd libpam-systemd iputils-ping zstd linux-image-amd64)
	own_kernel=yes
	;;
esac
# cloudroot's image boots by itself: GRUB for BIOS (i386-pc) and UEFI
# (x86_64-efi), written to the disk at each build from the root's own
# grub-*-bin modules, and grub2-common's update-grub and kernel hook
# (zz-update-grub), which regenerate the menu when a kernel comes or goes.
[[ $variant != cloudroot ]] || packages+=(grub2-common "${grub_pkgs[@]}")
# grub-cloud-amd64, as in Debian's cloud images: GRUB's boot code follows
# GRUB's upgrades. Its postinst, on the file triggers of /usr/lib/grub/
# i386-pc, x86_64-efi(-signed) and /usr/lib/shim, runs grub-install for
# i386-pc on the disk holding /boot and for x86_64-efi (--no-nvram
# --uefi-secure-boot --force-extra-removable: shim and Debian's signed GRUB
# on the ESP at /boot/efi, also at the removable path), once
# /etc/grub.d/enable_cloud exists; the image writes that flag after its
# packages are in (no block device at build time), with the ESP in fstab.
[[ $variant != cloudroot || -z $grub_cloud ]] || packages+=("$grub_cloud")
# The twin adds Debian's cloud-init (and builds the kernel's initrd).
# debootstrap resolves no virtual packages: python3-cryptography's
# python3-cffi-backend-api-* come from python3-cffi-backend, named here.
[[ $variant != cloud-init ]] || packages+=(cloud-init python3-cffi-backend)

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, chroot, and root-owned files in the image)"
for t in debootstrap:debootstrap zstd:zstd sfdisk:fdisk mkfs.ext4:e2fsprogs unshare:util-linux; do
	command -v "${t%%:*}" >/dev/null || die "${t%%:*} not found: install the Debian package '${t#*:}'"
done
[[ $variant != bare || -s ${DEBIAN_IMAGE_BAKE:-} ]] || die "DEBIAN_IMAGE_VARIANT=bare needs DEBIAN_IMAGE_BAKE=file (the seed's end-state script; just bench-vs-cloud-init makes it)"
[[ $variant != cloudroot || -f $deb_pkg ]] || die "no cloudroot package (DEB=${deb_pkg:-, none in $build}; just deb)"
if [[ $variant == cloudroot ]]; then
	for t in sgdisk:gdisk mkfs.vfat:dosfstools mcopy:mtools; do
		command -v "${t%%:*}" >/dev/null || die "${t%%:*} not found: install the Debian package '${t#*:}'"
	done
fi
if [[ $foreign == yes ]]; then
	[[ -f /usr/lib/binfmt.d/qemu-$qemu_arch.conf ]] || die "no /usr/lib/binfmt.d/qemu-$qemu_arch.conf: install the Debian package 'qemu-user-static' (ARCH=$arch runs $arch programs through qemu-user)"
	grep -qw binfmt_misc /proc/filesystems || die "the kernel has no binfmt_misc (ARCH=$arch runs $arch programs through qemu-user)"
fi
kver=
if [[ -z $own_kernel ]]; then
	[[ -s $build/kernel/version ]] || die "no $build/kernel/version (just kernel)"
	kver=$(<"$build/kernel/version")
fi

# apt_uris prints "URI SUITE" for every deb source apt is configured with,
# one-line (.list) and deb822 (.sources) formats alike.
apt_uris() {
	local f
	shopt -s nullglob
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		# deb [opts] URI SUITE COMPONENTS...
		sed -n 's/^[[:space:]]*deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\{0,1\}\([^[:space:]]\+\)[[:space:]]\+\([^[:space:]]\+\).*/\2 \3/p' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		awk '
			function flush() { if (deb && uris != "") { n = split(uris, u, " "); m = split(suites, s, " "); for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j] } deb = 0; uris = ""; suites = ""; enabled = 1 }
			BEGIN { enabled = 1 }
			/^[[:space:]]*$/ { if (enabled) flush(); else { deb = 0; uris = ""; suites = ""; enabled = 1 }; next }
			/^#/ { next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris = uris " " $i }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) suites = suites " " $i }
			tolower($1) == "enabled:" { if (tolower($2) == "no") enabled = 0 }
			END { if (enabled) flush() }
		' "$f"
	done
	shopt -u nullglob
}
# The first source serving a Debian release suite (bookworm, trixie, ...,
# not -security/-updates/-backports) is the archive; the first serving a
# -security suite is the security archive.
sources=$(apt_uris)
mirror=${DEBIAN_MIRROR:-$(awk '$2 !~ /-/ && $1 ~ /debian\/?$/ { print $1; exit }' <<<"$sources")}
security=${DEBIAN_SECURITY_MIRROR:-$(awk '$2 ~ /-security$/ { print $1; exit }' <<<"$sources")}
[[ -n $mirror ]] || die "no Debian archive in apt's sources (/etc/apt/sources.list{,.d/}); set DEBIAN_MIRROR"
[[ -n $security ]] || security=$mirror-security
mirror=${mirror%/}
security=${security%/}

# kernel_deb prints the linux-image .deb for $kver: KERNEL_DEB, the one
# kernel.sh keeps, or a fresh apt-get download into the cache.
kernel_deb() {
	local pkg=linux-image-$kver d f
	if [[ -n ${KERNEL_DEB:-} ]]; then
		[[ -f $KERNEL_DEB ]] || die "KERNEL_DEB=$KERNEL_DEB: no such file"
		printf '%s\n' "$KERNEL_DEB"
		return
	fi
	shopt -s nullglob
	for d in "$cache/kernel-debs" "$build/cache"; do
		for f in "$d/${pkg}"_*_"$arch".deb "$d/${pkg}-unsigned"_*_"$arch".deb; do
			shopt -u nullglob
			printf '%s\n' "$f"
			return
		done
	done
	shopt -u nullglob
	mkdir -p "$cache/kernel-debs"
	log "downloading $pkg"
	(cd "$cache/kernel-debs" && apt-get download -q -o APT::Sandbox::User=root "$pkg:$arch") >&2
	f=$(ls "$cache/kernel-debs/${pkg}"_*_"$arch".deb | tail -n 1)
	printf '%s\n' "$f"
}

# in_root DIR CMD...: run CMD chrooted into DIR with its own mount, PID and
# network namespaces: package scripts can mount /proc, start daemons or try
# the network, and all of it ends with the command, isolated from the host.
# /dev/shm is a fresh tmpfs (Python's multiprocessing, used by py3compile in
# the postinst of Python packages, needs it).
in_root() {
	local dir=$1
	shift
	unshare --mount --net --pid --fork --kill-child -- /bin/sh -c '
		dir=$1
		shift
		mkdir -p "$dir/dev/shm" && mount -t tmpfs -o mode=1777 shm "$dir/dev/shm" || exit 1
		exec chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 INITRD=No "$@"
	' in_root "$dir" "$@"
}

# A foreign architecture's root (arm64 on an amd64 host): in_root as above,
# in a user namespace too, whose own binfmt_misc (Linux 6.7 and later)
# runs the root's programs through qemu-user, registered as Debian's
# qemu-user-static describes it (F: the interpreter is opened now, from
# the host, so the root needs no copy). This shell, root, writes the
# namespace's id maps itself — every uid and gid to itself, so files keep
# their owners — while the child waits on a FIFO; the child's next exec
# then holds root's capabilities in the namespace. A user namespace may not
# mknod: container=lxc tells debootstrap's second stage so (the first stage,
# run by root on the host, made the root's /dev nodes).
if [[ $foreign == yes ]]; then
	in_root() {
		local dir=$1 fifo pid rc=0
		shift
		fifo=$(mktemp -u "${TMPDIR:-/tmp}/debian-image-userns.XXXXXX")
		mkfifo -m 0600 "$fifo"
		unshare --user --mount --net --pid --fork --kill-child -- /bin/sh -c '
			read -r _ <"$1" || exit 1
			exec /bin/sh -c "$0" "$@"
		' '
			reg=$1 dir=$2
			shift 3
			mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 1
			printf "%s" "$reg" >/proc/sys/fs/binfmt_misc/register || exit 1
			mkdir -p "$dir/dev/shm" && mount -t tmpfs -o mode=1777 shm "$dir/dev/shm" || exit 1
			exec chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
				DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 INITRD=No container=lxc "$@"
		' "$fifo" "$(grep -v "^#" "/usr/lib/binfmt.d/qemu-$qemu_arch.conf")" "$dir" in_root "$@" &
		pid=$!
		while [[ -e /proc/$pid && $(readlink /proc/$pid/ns/user) == "$(readlink /proc/self/ns/user)" ]]; do
			sleep 0.01
		done
		if echo '0 0 4294967295' >"/proc/$pid/uid_map" && echo '0 0 4294967295' >"/proc/$pid/gid_map"; then
			echo >"$fifo"
		else
			kill "$pid" 2>/dev/null || true
		fi
		wait "$pid" || rc=$?
		rm -f "$fifo"
		return "$rc"
	}
fi

# build_root DIR KERNEL_DEB: debootstrap the Debian root into DIR (no
# KERNEL_DEB: the suite's own kernel came with debootstrap).
# Its text is part of the cache key: edit it and the root is rebuilt.
build_root() {
	local r=$1 deb=$2 inc initrd=No
	inc=$(
		IFS=,
		echo "${packages[*]}"
	)
	# Stage 1 downloads and unpacks (network: the mirror only).
	debootstrap --foreign --arch="$arch" --variant=minbase --include="$inc" \
		"$suite" "$r" "$mirror/" >&2
	# No package's maintainer script may start a service in the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 0755 "$r/usr/sbin/policy-rc.d"
	# Stage 2 configures, offline, in namespaces of its own.
	in_root "$r" /debootstrap/debootstrap --second-stage >&2 || {
		tail -n 40 "$r/debootstrap/debootstrap.log" >&2
		die "debootstrap --second-stage failed (the log's end is above)"
	}
	# The kernel, the very package the initramfs's modules came from
	# (INITRD=No: cloudroot's initramfs boots this root, none is built;
	# the cloud-init twin boots with the initrd initramfs-tools makes).
	[[ $variant == cloudroot ]] || initrd=Yes
	if [[ -n $deb ]]; then
		cp "$deb" "$r/tmp/linux-image.deb"
		in_root "$r" /usr/bin/env INITRD=$initrd dpkg -i /tmp/linux-image.deb >&2
		rm -f "$r/tmp/linux-image.deb"
		[[ -d $r/lib/modules/$kver ]] || die "the root has no /lib/modules/$kver after installing $deb"
	else
		# The suite's kernel was configured with INITRD=No (in_root).
		[[ $initrd == No ]] || in_root "$r" update-initramfs -c -k all >&2
		# As debian-cloud-images' SYSTEM_BOOT scripts: networkd and
		# resolved run netplan's configuration.
		in_root "$r" systemctl enable systemd-networkd.service systemd-resolved.service >&2
	fi

	# What Debian's cloud images do to a fresh root: apt sources, a
	# root filesystem found by label, no host keys or machine id baked in
	# (first boot makes them), C.UTF-8, a serial console.
	cat >"$r/etc/apt/sources.list" <<-EOF
		deb $mirror $suite main
		deb $mirror $suite-updates main
		deb $security $suite-security main
	EOF
	printf '# <file system>\t<mount point>\t<type>\t<options>\t<dump>\t<pass>\nLABEL=cloudimg-rootfs\t/\text4\trw,discard,errors=remount-ro\t0\t1\n' >"$r/etc/fstab"
	if [[ -x $r/sbin/ifup ]]; then
		printf 'auto lo\niface lo inet loopback\n\nsource /etc/network/interfaces.d/*\n' >"$r/etc/network/interfaces"
		mkdir -p "$r/etc/network/interfaces.d"
	fi
	echo localhost >"$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n' >"$r/etc/hosts"
	echo 'LANG=C.UTF-8' >"$r/etc/default/locale"
	rm -f "$r"/etc/ssh/ssh_host_*
	: >"$r/etc/machine-id"
	rm -f "$r/var/lib/dbus/machine-id"
	rm -f "$r/usr/sbin/policy-rc.d"
	in_root "$r" apt-get clean >&2
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/log/*.log "$r"/var/log/apt/* "$r"/debootstrap
	[[ $initrd == Yes ]] || rm -f "$r"/boot/initrd.img-*
}

deb= deb_version=
if [[ -z $own_kernel ]]; then
	deb=$(kernel_deb)
	[[ $(dpkg-deb -f "$deb" Package) == linux-image-"$kver"* ]] || die "$deb is not linux-image-$kver"
	[[ $(dpkg-deb -f "$deb" Architecture) == "$arch" ]] || die "$deb is not for $arch"
	deb_version=$(dpkg-deb -f "$deb" Version)
fi
key=$({
	declare -f build_root in_root
	printf '%s\n' "$variant" "${packages[@]}" "$suite" "$mirror" "$security" "$kver" "$deb_version" "$arch"
} | sha256sum | cut -c1-16)
root_tar=$cache/debian-$release-$key.tar.zst
[[ $variant == cloudroot ]] || root_tar=$cache/debian-$release-$variant-$key.tar.zst
[[ $arch == amd64 ]] || root_tar=${root_tar/debian-$release-/debian-$release-$arch-}

t0=$(date +%s.%N)
mkdir -p "$cache" "$(dirname "$out")"
if [[ -f $root_tar ]]; then
	log "cached root: $root_tar"
else
	log "building the Debian $release root (cache key $key; $suite from $mirror, kernel ${kver:-from $suite}): several minutes"
	work=$(mktemp -d "$cache/.debian-$release-$key.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	build_root "$work/root" "$deb"
	tar --zstd --numeric-owner --xattrs --xattrs-include='*' --acls -C "$work/root" -cf "$work/root.tar.zst" .
	mv -f "$work/root.tar.zst" "$root_tar"
	rm -rf "$work"
	trap - EXIT
	log "cached $root_tar ($(du -h "$root_tar" | cut -f1)) in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"
fi

# The disk of Debian's official cloud images: GPT, partition 14 the BIOS
# boot partition (GRUB's core.img), 15 the EFI system partition, 1 the root
# (last, so it can grow), in sectors of 512 bytes.
bios_start=2048
esp_start=8192
root_start=262144

# grub_images ROOT: GRUB's modules into ROOT/boot/grub/{i386-pc,x86_64-efi}
# (where the boot images find them: prefix ($root)/boot/grub), the
# grub-mkconfig settings for the booted image, a first grub.cfg, and the two
# boot images, made with the root's own grub-mkimage, into $stage: core.img
# (BIOS) and BOOTX64.EFI (UEFI, at the removable-media path: no NVRAM entry
# needed). Both find the root by its label.
grub_images() {
	local r=$1 p
	for p in "${grub_platforms[@]}"; do
		mkdir -p "$r/boot/grub/$p"
		cp "$r/usr/lib/grub/$p/"*.mod "$r/usr/lib/grub/$p/"*.lst "$r/boot/grub/$p/"
	done
	printf 'search --no-floppy --label cloudimg-rootfs --set=root\nset prefix=($root)/boot/grub\n' >"$r/tmp/early.cfg"
	if [[ ${grub_platforms[0]} == i386-pc ]]; then
		cp "$r/usr/lib/grub/i386-pc/boot.img" "$stage/boot.img"
		in_root "$r" grub-mkimage -O i386-pc -o /tmp/core.img -c /tmp/early.cfg -p /boot/grub biosdisk part_gpt ext2 search search_label >&2
		mv "$r/tmp/core.img" "$stage/"
	fi
	in_root "$r" grub-mkimage -O "${grub_platforms[-1]}" -o "/tmp/$efi_image" -c /tmp/early.cfg -p /boot/grub part_gpt ext2 search search_label >&2
	mv "$r/tmp/$efi_image" "$stage/"
	rm -f "$r/tmp/early.cfg"
	# update-grub (zz-update-grub, after every kernel change) in the
	# booted image: a serial console, no menu wait, as Debian's cloud images;
	# no_timer_check as Fedora's cloud images (a virtual machine's timer
	# IRQ check fails on a busy host, and the kernel panics).
	mkdir -p "$r/etc/default/grub.d"
	cat >"$r/etc/default/grub.d/50-cloudroot-image.cfg" <<-EOF
		# cloudroot's image (scripts/debian-image.sh): a serial console, no wait.
		GRUB_DISTRIBUTOR=Debian
		GRUB_TIMEOUT=0
		GRUB_CMDLINE_LINUX_DEFAULT=""
		GRUB_CMDLINE_LINUX="console=tty0 console=$console$cmdline_extra"
		$([[ $grub_serial == yes ]] && printf 'GRUB_TERMINAL="console serial"\nGRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"' || echo GRUB_TERMINAL=console)
		GRUB_DISABLE_OS_PROBER=true
		GRUB_DISABLE_RECOVERY=true
	EOF
	# The first menu, as grub-mkconfig would write it (it needs the root's
	# block device, which the build has not): the kernel and the cloudroot
	# initrd its package built. The booted image's update-grub replaces it.
	cat >"$r/boot/grub/grub.cfg" <<-EOF
		# Written by scripts/debian-image.sh; update-grub regenerates it.
		set default=0
		set timeout=0
		$([[ $grub_serial == yes ]] && printf 'serial --unit=0 --speed=115200\nterminal_input console serial\nterminal_output console serial' || echo '# the firmware console is the serial port')
		insmod part_gpt
		insmod ext2
		search --no-floppy --label cloudimg-rootfs --set=root
		menuentry 'Debian GNU/Linux' {
			linux /boot/vmlinuz-$kver root=LABEL=cloudimg-rootfs ro console=tty0 console=$console$cmdline_extra
			initrd /boot/initrd.img-$kver
		}
	EOF
}

# le N BYTES: N as BYTES little-endian bytes.
le() {
	local v=$1 n=$2 i
	for ((i = 0; i < n; i++)); do
		printf "\\x$(printf %02x $(((v >> (8 * i)) & 255)))"
	done
}

# poke FILE OFFSET: write stdin into FILE at byte OFFSET.
poke() {
	dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# bake_bare ROOT: the bare twin's end state, DEBIAN_IMAGE_BAKE run
# chrooted in ROOT.
bake_bare() {
	cp "$DEBIAN_IMAGE_BAKE" "$1/tmp/bake.sh"
	in_root "$1" /bin/sh /tmp/bake.sh >&2
	rm -f "$1/tmp/bake.sh"
}

# Each build: unpack, install cloudroot, make the disk.
esp_id=
t1=$(date +%s.%N)
stage=$(mktemp -d "$(dirname "$out")/.debian-12-stage.XXXXXX")
trap 'rm -rf "$stage" "$out.tmp"' EXIT
r=$stage/root
mkdir "$r"
tar --zstd --numeric-owner --xattrs --xattrs-include='*' --acls -C "$r" -xpf "$root_tar"
# The suite's own kernel: the newest in the root.
[[ -n $kver ]] || kver=$(ls "$r/lib/modules" | sort -V | tail -n 1)
[[ -n $kver ]] || die "$root_tar has no kernel in /lib/modules"
if [[ $variant == cloudroot ]]; then
	# cloudroot goes in as a user installs it: its Debian package, through
	# apt, which removes initramfs-tools (the package takes its place as
	# the linux-initramfs-tool). The driver profile chosen here is recorded
	# in the image: the kernel hooks build every kernel's initrd with it.
	mkdir -p "$r/etc/cloudroot/initramfs.conf.d"
	printf '# The driver profile this image was built with (scripts/debian-image.sh).\nPROFILE=%s\n' "$profile" >"$r/etc/cloudroot/initramfs.conf.d/50-image.conf"
	# Before it goes: Debian's own initramfs-tools initrd for the kernel,
	# kept beside the image as debian-N.initramfs-tools.initrd, for booting
	# the image as a distribution's initrd would (TestDebianInRoot: no
	# cloudroot initramfs ran, the in-root units provision). Not in the image.
	if [[ $foreign == no ]]; then
		in_root "$r" update-initramfs -c -k "$kver" >&2
		cp "$r/boot/initrd.img-$kver" "${out%.img}.initramfs-tools.initrd.tmp"
		mv -f "${out%.img}.initramfs-tools.initrd.tmp" "${out%.img}.initramfs-tools.initrd"
		rm -f "$r/boot/initrd.img-$kver"
	fi
	cp "$deb_pkg" "$r/tmp/cloudroot.deb"
	in_root "$r" /usr/bin/env INITRD= apt-get install -y -q --purge --no-install-recommends /tmp/cloudroot.deb >&2
	rm -f "$r/tmp/cloudroot.deb"
	[[ -s $r/boot/initrd.img-$kver ]] || die "installing $deb_pkg built no /boot/initrd.img-$kver"
	grub_images "$r"
	# grub-cloud's flag, now that no package script runs at build time, and
	# the ESP at /boot/efi (its FAT volume id, chosen here, in fstab), where
	# its grub-install finds it in the booted image.
	if [[ -n $grub_cloud ]]; then
		esp_id=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n' | tr a-f A-F)
		: >"$r/etc/grub.d/enable_cloud"
		mkdir -p "$r/boot/efi"
		printf 'UUID=%s-%s\t/boot/efi\tvfat\tumask=0077\t0\t1\n' "${esp_id:0:4}" "${esp_id:4:4}" >>"$r/etc/fstab"
	fi
else
	[[ $variant != bare ]] || bake_bare "$r"
	cp "$r/boot/initrd.img-$kver" "${out%.img}.initrd.tmp"
	mv -f "${out%.img}.initrd.tmp" "${out%.img}.initrd"
fi

rm -f "$out.tmp"
truncate -s "${size_mb}M" "$out.tmp"
sectors=$((size_mb * 2048))
# mkroot START_BYTES KIB: the ext4 root, filled from $r, at START_BYTES.
mkroot() {
	mkfs.ext4 -q -F -L cloudimg-rootfs -E "offset=$1,nodiscard" -d "$r" "$out.tmp" "$2k"
}
if [[ $variant == cloudroot ]]; then
	# The filesystem first, then the partition table and boot code, which
	# nothing writes after them.
	mkroot $((root_start * 512)) $(((sectors - 34 - root_start) / 2))
	# (No BIOS boot partition where GRUB has no BIOS platform: arm64.)
	bios_part=(-n "14:$bios_start:$((esp_start - 1))" -t 14:EF02 -c 14:bios)
	[[ -f $stage/core.img ]] || bios_part=()
	sgdisk "${bios_part[@]}" \
		-n "15:$esp_start:$((root_start - 1))" -t 15:EF00 -c 15:esp \
		-n "1:$root_start:0" -t 1:8300 -c 1:cloudimg-rootfs "$out.tmp" >/dev/null
	# UEFI: the ESP, FAT with \EFI\BOOT\BOOTX64.EFI (BOOTAA64.EFI on arm64).
	truncate -s $(((root_start - esp_start) * 512)) "$stage/esp.img"
	mkfs.vfat -F 32 -n ESP ${esp_id:+-i "$esp_id"} "$stage/esp.img" >/dev/null
	mmd -i "$stage/esp.img" ::/EFI ::/EFI/BOOT
	mcopy -i "$stage/esp.img" "$stage/$efi_image" "::/EFI/BOOT/$efi_image"
	dd if="$stage/esp.img" of="$out.tmp" bs=1M seek=$((esp_start / 2048)) conv=notrunc,sparse status=none
	if [[ -f $stage/core.img ]]; then
		# BIOS: what grub-bios-setup does for a GPT disk, without a block
		# device: core.img into the BIOS boot partition, its first sector's
		# blocklist (at 0x1f4: start LBA, 8 bytes) pointing at its second
		# sector; boot.img's code (440 bytes, the partition table stays) into
		# the MBR, loading core.img from the LBA at 0x5c, with the jump of its
		# boot-drive check (0x66) made NOPs, as for any hard disk.
		core_sectors=$((($(stat -c %s "$stage/core.img") + 511) / 512))
		((core_sectors <= esp_start - bios_start)) || die "core.img is $core_sectors sectors: more than the BIOS boot partition"
		dd if="$stage/core.img" of="$out.tmp" bs=512 seek=$bios_start conv=notrunc status=none
		le $((bios_start + 1)) 8 | poke "$out.tmp" $((bios_start * 512 + 0x1f4))
		dd if="$stage/boot.img" of="$out.tmp" bs=1 count=440 conv=notrunc status=none
		le $bios_start 8 | poke "$out.tmp" $((0x5c))
		printf '\x90\x90' | poke "$out.tmp" $((0x66))
	fi
else
	part_kib=$(((size_mb - 2) * 1024))
	sfdisk -q "$out.tmp" <<EOF
label: gpt
start=2048, size=$((part_kib * 2)), type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name="cloudimg-rootfs"
EOF
	mkroot $((1024 * 1024)) "$part_kib"
fi
mv -f "$out.tmp" "$out"
what="Debian's cloud-init"
[[ $variant != bare ]] || what="the end state of $DEBIAN_IMAGE_BAKE"
[[ $variant != cloudroot ]] || what="$(basename "$deb_pkg") through apt, GRUB for BIOS and UEFI"
[[ $variant != cloudroot || -f $stage/core.img ]] || what="$(basename "$deb_pkg") through apt, GRUB for UEFI ($arch)"
log "$out: ${size_mb} MiB GPT disk, ext4 cloudimg-rootfs from $(basename "$root_tar") + $what, $(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
