#!/usr/bin/env bash
# kernel.sh — put a real Debian kernel and its modules into build/kernel/.
#
# Outputs (all under $BUILD_DIR/kernel, default build/kernel):
#   root/        the unpacked linux-image .deb (dpkg-deb -x), depmod'ed
#   vmlinuz      copy of root/boot/vmlinuz-<ver> (bzImage, boots anywhere)
#   vmlinux      the uncompressed ELF inside vmlinuz; QEMU boots it via PVH
#                (-kernel vmlinux), skipping ~2.7 s of XZ decompression under TCG
#   version      the uname -r string, written last: it marks a complete build
#   modules      symlink -> root/lib/modules/<ver>
#
# The .deb is cached outside the clone, in $CLOUDROOT_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/cloudroot), so a fresh clone (CI) does not
# download it again. Idempotent: when version matches and
# every output exists, nothing is done.
#
# Environment:
#   KERNEL_DEB=/path/to.deb   use this linux-image .deb instead of downloading
#   ARCH=amd64|arm64          the kernel's architecture (default amd64); arm64 needs
#                             dpkg's arm64 architecture (added, with an apt-get update,
#                             when run as root) and has no vmlinux (QEMU's virt machine
#                             boots Debian's arm64 vmlinuz, an uncompressed Image)
#   KERNEL_META=pkg           meta package to resolve (default linux-image-$ARCH)
#   KERNEL_PACKAGE=pkg        skip resolution, use this linux-image-<ver> package
#   BUILD_DIR=dir             default <repo>/build
#   CLOUDROOT_CACHE=dir       where downloads are kept (default ${XDG_CACHE_HOME:-~/.cache}/cloudroot)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
out=$build/kernel
cache=${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot}/kernel-debs
arch=${ARCH:-amd64}
case $arch in
amd64 | arm64) ;;
*) printf 'kernel.sh: error: ARCH=%s: amd64 or arm64\n' "$arch" >&2; exit 1 ;;
esac
meta=${KERNEL_META:-linux-image-$arch}
# apt names a foreign architecture's package NAME:ARCH.
qual=
[[ $arch == "$(dpkg --print-architecture 2>/dev/null || echo amd64)" ]] || qual=:$arch

log() { printf 'kernel.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# need CMD PACKAGE: fail with the Debian package to install when CMD is missing.
need() {
	if ! command -v "$1" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$1 && ! -x /sbin/$1 ]]; then
		die "$1 not found: install the Debian package '$2' (apt-get install -y --no-install-recommends $2, or run scripts/deps.sh)"
	fi
}
# Debian keeps depmod in /sbin or /usr/sbin, which a non-root PATH may lack.
PATH=$PATH:/usr/sbin:/sbin
need dpkg-deb dpkg
need depmod kmod
need xz xz-utils
need readelf binutils

# A foreign architecture's packages are visible to apt only once dpkg knows it.
if [[ -n $qual ]] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
	if [[ -z ${KERNEL_DEB:-} ]]; then
		[[ $(id -u) -eq 0 ]] || die "dpkg does not know the $arch architecture: run as root 'dpkg --add-architecture $arch && apt-get update', or set KERNEL_DEB=/path/to/linux-image-*-$arch.deb"
		log "adding dpkg's $arch architecture (dpkg --add-architecture $arch; apt-get update)"
		dpkg --add-architecture "$arch"
		apt-get update -qq
	fi
fi

# resolve_package prints the linux-image-<ver> package the meta package depends on.
resolve_package() {
	local dep
	dep=$(apt-cache depends "$meta$qual" 2>/dev/null | sed -n 's/^ *|\{0,1\}Depends: \(linux-image-[^ <>:]*\)\(:[a-z0-9]*\)\{0,1\}$/\1/p' | head -n 1 || true)
	if [[ -z $dep ]]; then
		log "apt-cache knows nothing about $meta; running apt-get update"
		if [[ $(id -u) -ne 0 ]]; then
			die "apt-get update needs root; run it as root, or set KERNEL_DEB=/path/to/linux-image-*.deb"
		fi
		apt-get update -qq
		dep=$(apt-cache depends "$meta$qual" 2>/dev/null | sed -n 's/^ *|\{0,1\}Depends: \(linux-image-[^ <>:]*\)\(:[a-z0-9]*\)\{0,1\}$/\1/p' | head -n 1 || true)
	fi
	[[ -n $dep ]] || die "cannot resolve the kernel package that $meta depends on"
	printf '%s\n' "$dep"
}

if [[ -n ${KERNEL_DEB:-} ]]; then
	[[ -f $KERNEL_DEB ]] || die "KERNEL_DEB=$KERNEL_DEB: no such file"
	deb=$(cd "$(dirname "$KERNEL_DEB")" && pwd)/$(basename "$KERNEL_DEB")
	pkg=$(dpkg-deb -f "$deb" Package)
else
	pkg=${KERNEL_PACKAGE:-$(resolve_package)}
	deb=
fi
# linux-image-6.1.0-56-amd64 (or ...-amd64-unsigned) -> 6.1.0-56-amd64
ver=${pkg#linux-image-}
ver=${ver%-unsigned}
[[ $ver != "$pkg" && -n $ver ]] || die "$pkg does not look like a linux-image-<version> package"

complete() {
	[[ -f $out/version && $(<"$out/version") == "$ver" ]] &&
		[[ -s $out/vmlinuz && ($arch != amd64 || -s $out/vmlinux) && -s $out/root/lib/modules/$ver/modules.dep ]] &&
		[[ -L $out/modules && $(readlink "$out/modules") == "root/lib/modules/$ver" ]]
}
if complete; then
	log "up to date: $ver ($out)"
	exit 0
fi

mkdir -p "$out" "$cache"
rm -f "$out/version"

# 1. The .deb: given, cached, or downloaded.
if [[ -z $deb ]]; then
	shopt -s nullglob
	cached=("$cache/${pkg}"_*.deb)
	shopt -u nullglob
	if ((${#cached[@]} > 0)); then
		deb=${cached[-1]}
		log "using cached $(basename "$deb")"
	else
		log "downloading $pkg"
		t0=$SECONDS
		# apt-get download writes into the current directory; a partial file
		# never gets the final name, so the cache stays consistent.
		# As root, apt hands the download to the unprivileged _apt user, who
		# cannot write into a build dir; download as root instead.
		sandbox=()
		[[ $(id -u) -ne 0 ]] || sandbox=(-o APT::Sandbox::User=root)
		(cd "$cache" && apt-get download -q "${sandbox[@]}" "$pkg$qual")
		cached=("$cache/${pkg}"_*.deb)
		deb=${cached[-1]}
		[[ -f $deb ]] || die "apt-get download $pkg produced no .deb in $cache"
		log "downloaded $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $((SECONDS - t0)) s"
	fi
fi

# 2. Unpack, unless root/ already holds this version.
if [[ ! -f $out/root/boot/vmlinuz-$ver || ! -f $out/root/lib/modules/$ver/modules.order ]]; then
	log "unpacking $(basename "$deb")"
	rm -rf "$out/root" "$out/root.tmp"
	dpkg-deb -x "$deb" "$out/root.tmp"
	[[ -d $out/root.tmp/lib/modules/$ver ]] || die "$deb has no lib/modules/$ver"
	mv "$out/root.tmp" "$out/root"
fi

# 3. modules.dep & co: the .deb ships none (its postinst runs depmod).
log "depmod $ver"
depmod -b "$out/root" "$ver"

# 4. vmlinuz + modules symlink.
cp -f "$out/root/boot/vmlinuz-$ver" "$out/vmlinuz.tmp"
mv -f "$out/vmlinuz.tmp" "$out/vmlinuz"
ln -sfn "root/lib/modules/$ver" "$out/modules"

# 5. vmlinux: find the first compressed stream in the bzImage that decompresses
# to an ELF (the same idea as the kernel's scripts/extract-vmlinux).
is_elf() { [[ $(head -c 4 "$1" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; }
extract_vmlinux() {
	local img=$1 dst=$2 magic cmd off
	# magic (grep -P bytes) and decompressor; Debian amd64 uses XZ.
	for spec in '\xfd7zXZ\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08:gzip -dcq'; do
		magic=${spec%%:*}
		cmd=${spec#*:}
		for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1 | head -n 5); do
			# Trailing data after the stream makes xz exit 1: tolerated, the
			# result is judged by its ELF header instead.
			# shellcheck disable=SC2086 # cmd is a command and its flags
			tail -c "+$((off + 1))" "$img" | $cmd >"$dst" 2>/dev/null || true
			if [[ -s $dst ]] && is_elf "$dst"; then
				log "vmlinux: ${cmd%% *} stream at offset $off"
				return 0
			fi
		done
	done
	return 1
}
if [[ $arch == amd64 ]]; then
	if [[ ! -s $out/vmlinux || $out/vmlinux -ot $out/vmlinuz ]]; then
		extract_vmlinux "$out/vmlinuz" "$out/vmlinux.tmp" || die "no ELF vmlinux found inside $out/vmlinuz"
		mv -f "$out/vmlinux.tmp" "$out/vmlinux"
	fi
	# PVH boot needs the Xen PHYS32_ENTRY note (type 0x12, owner "Xen").
	if readelf -n "$out/vmlinux" 2>/dev/null | grep -Eq 'Xen.*(0x00000012|PHYS32_ENTRY)'; then
		log "vmlinux has the Xen PHYS32_ENTRY note: qemu -kernel vmlinux boots via PVH"
	else
		log "warning: vmlinux lacks the Xen PHYS32_ENTRY note (CONFIG_PVH off?); boot build/kernel/vmlinuz instead"
	fi
fi

printf '%s\n' "$ver" >"$out/version"
log "ready: $ver vmlinuz $(du -h "$out/vmlinuz" | cut -f1)$([[ ! -f $out/vmlinux ]] || echo ", vmlinux $(du -h --apparent-size "$out/vmlinux" | cut -f1)"), $(find -L "$out/modules" -name '*.ko*' | wc -l) modules"
