#!/usr/bin/env bash
# mkseed.sh — make a NoCloud seed image from a directory.
#
# Usage: scripts/mkseed.sh DIR OUT [iso|vfat]
#   DIR holds meta-data and user-data (required) and optionally vendor-data
#   and network-config. iso (default): ISO9660 + Rock Ridge + Joliet, volume
#   id "cidata" (attach as a CD). vfat: a FAT image labelled "CIDATA" (attach
#   as a disk). No root privileges needed.
set -euo pipefail

log() { printf 'mkseed.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $# -ge 2 && $# -le 3 ]] || die "usage: $0 DIR OUT [iso|vfat]"
dir=$1
out=$2
kind=${3:-iso}
PATH=$PATH:/usr/sbin:/sbin

[[ -d $dir ]] || die "$dir is not a directory"
files=()
for f in meta-data user-data vendor-data network-config; do
	if [[ -f $dir/$f ]]; then
		files+=("$f")
	elif [[ $f == meta-data || $f == user-data ]]; then
		die "$dir/$f missing (NoCloud needs meta-data and user-data; user-data may be empty)"
	fi
done

mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
case $kind in
iso)
	if command -v genisoimage >/dev/null; then
		(cd "$dir" && genisoimage -quiet -V cidata -r -J -o "$tmp" "${files[@]}")
	elif command -v xorriso >/dev/null; then
		(cd "$dir" && xorriso -as mkisofs -quiet -V cidata -r -J -o "$tmp" "${files[@]}")
	else
		die "neither genisoimage nor xorriso found: install the Debian package 'genisoimage'"
	fi
	;;
vfat)
	command -v mkfs.vfat >/dev/null || die "mkfs.vfat not found: install the Debian package 'dosfstools'"
	command -v mcopy >/dev/null || die "mcopy not found: install the Debian package 'mtools'"
	# FAT12/16 needs some slack for the FATs and root directory: 2 MiB
	# minimum, else twice the payload.
	kib=$(du -skL "${files[@]/#/$dir/}" | awk '{ s += $1 } END { print s }')
	kib=$((kib * 2 + 512))
	((kib >= 2048)) || kib=2048
	rm -f "$tmp"
	mkfs.vfat -C -n CIDATA "$tmp" "$kib" >/dev/null
	mcopy -o -i "$tmp" "${files[@]/#/$dir/}" ::/
	;;
*)
	die "unknown seed kind $kind (want iso or vfat)"
	;;
esac
chmod 0644 "$tmp"
mv -f "$tmp" "$out"
log "$out: $kind seed with ${files[*]} ($(du -k --apparent-size "$out" | cut -f1) KiB)"
