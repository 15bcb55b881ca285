#!/usr/bin/env bash
# mkrootfs.sh — build build/rootfs.img: a GPT disk image whose partition 1
# (PARTLABEL cloudimg-rootfs, type Linux filesystem) holds an ext4 filesystem
# labelled cloudimg-rootfs with a busybox userland that looks like Debian 12
# to cloud-init-style tools, the cloudroot agent at
# /usr/lib/cloudroot/cloudroot-agent and its front at /usr/bin/cloudroot
# (/usr/bin/cloud-init -> cloudroot).
#
# No root privileges and no loop mounts: sfdisk writes the GPT into a sparse
# file, mkfs.ext4 -E offset=... -d fills the partition from a staged tree,
# and debugfs fixes owners and modes afterwards (everything 0:0 whoever
# builds it; /etc/shadow and /etc/gshadow 0640 root:shadow).
#
# busybox init runs /etc/init.d/rcS, which runs the config and final stages
# and prints "cloudroot-rootfs: config stage rc=N" / "final stage rc=N".
# With cloudroot.test.poweroff on the kernel command line it powers off
# after the final stage.
#
# Usage: scripts/mkrootfs.sh [OUT]      (default build/rootfs.img)
# Environment:
#   AGENT=build/cloudroot-agent  the static full agent (required)
#   FRONT=build/cloudroot    the static front binary (default: cloudroot beside AGENT)
#   ROOTFS_SIZE_MB=256       image size
#   ROOTFS_PART_MB=          partition 1's size (default: the disk less 2 MiB);
#                            smaller leaves free space for growpart to take
#   BUSYBOX=/bin/busybox     a static busybox (Debian package busybox-static)
#   ARCH=amd64|arm64         the image's architecture (default: the host's). For
#                            another one, busybox-static:ARCH is fetched with apt
#                            into the download cache (dpkg must know ARCH: see
#                            kernel.sh), the host's e2fsprogs are not copied (no
#                            resize2fs/mke2fs in that image) and the console
#                            getty is on ttyAMA0 (arm64's PL011)
#   CLOUDROOT_CACHE=dir      download cache (default ${XDG_CACHE_HOME:-~/.cache}/cloudroot)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$repo/build/rootfs.img}
agent=${AGENT:-$repo/build/cloudroot-agent}
front=${FRONT:-$(dirname "$agent")/cloudroot}
size_mb=${ROOTFS_SIZE_MB:-256}
busybox=${BUSYBOX:-$(command -v busybox || echo /bin/busybox)}
host_arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
arch=${ARCH:-$host_arch}
cache=${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot}
PATH=$PATH:/usr/sbin:/sbin

log() { printf 'mkrootfs.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# A foreign image: its busybox comes from busybox-static:ARCH; the applet list
# from the host's busybox (the same Debian version and configuration), since
# the foreign binary cannot run here.
list_busybox=$busybox
console=ttyS0
if [[ $arch != "$host_arch" ]]; then
	console=ttyAMA0
	[[ $arch == arm64 ]] || die "ARCH=$arch: amd64 or arm64"
	if [[ -z ${BUSYBOX:-} ]]; then
		bbdir=$cache/busybox-$arch
		shopt -s nullglob
		debs=("$bbdir"/busybox-static_*_"$arch".deb)
		shopt -u nullglob
		if ((${#debs[@]} == 0)); then
			mkdir -p "$bbdir"
			sandbox=()
			[[ $(id -u) -ne 0 ]] || sandbox=(-o APT::Sandbox::User=root)
			(cd "$bbdir" && apt-get download -q "${sandbox[@]}" "busybox-static:$arch") >&2 ||
				die "apt-get download busybox-static:$arch failed (dpkg --add-architecture $arch && apt-get update, as root)"
			debs=("$bbdir"/busybox-static_*_"$arch".deb)
		fi
		rm -rf "$bbdir/root"
		dpkg-deb -x "${debs[-1]}" "$bbdir/root"
		busybox=$bbdir/root/bin/busybox
	fi
	list_busybox=$(command -v busybox || echo /bin/busybox)
fi

for t in sfdisk:fdisk mkfs.ext4:e2fsprogs debugfs:e2fsprogs; do
	command -v "${t%%:*}" >/dev/null || die "${t%%:*} not found: install the Debian package '${t#*:}' (or run scripts/deps.sh)"
done
[[ -x $busybox ]] || die "no busybox at $busybox: install the Debian package 'busybox-static'"
"$list_busybox" --list-full >/dev/null || die "$list_busybox --list-full failed"
if command -v file >/dev/null && ! file -L "$busybox" | grep -q 'statically linked'; then
	die "$busybox is not statically linked: install 'busybox-static' (not 'busybox')"
fi
[[ -f $agent ]] || die "no agent binary at $agent (build it: just agent, or set AGENT=...)"
[[ -f $front ]] || die "no front binary at $front (build it: just agent, or set FRONT=...)"
if [[ ! $size_mb =~ ^[0-9]+$ ]] || ((size_mb < 16)); then
	die "ROOTFS_SIZE_MB=$size_mb: want an integer >= 16"
fi
part_mb=${ROOTFS_PART_MB:-$((size_mb - 2))}
if [[ ! $part_mb =~ ^[0-9]+$ ]] || ((part_mb < 14 || part_mb > size_mb - 2)); then
	die "ROOTFS_PART_MB=$part_mb: want an integer from 14 to ROOTFS_SIZE_MB-2 ($((size_mb - 2)))"
fi

t0=$(date +%s.%N)
mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$(dirname "$out")/.rootfs-stage.XXXXXX")
cmds=$stage.debugfs
trap 'rm -rf "$stage" "$cmds" "$out.tmp"' EXIT
r=$stage

# put PATH MODE < content: write a file into the tree.
put() {
	mkdir -p "$(dirname "$r/$1")"
	cat >"$r/$1"
	chmod "$2" "$r/$1"
}

# --- directories ---------------------------------------------------------
for d in bin sbin lib usr/bin usr/sbin usr/lib usr/local/bin usr/share \
	dev proc sys run mnt media opt srv home \
	etc/init.d etc/ssh/sshd_config.d etc/skel etc/cloud/cloud.cfg.d etc/network \
	var/lib/cloud/scripts/per-boot var/lib/cloud/scripts/per-instance var/lib/cloud/scripts/per-once \
	var/log var/cache var/spool var/mail; do
	mkdir -p "$r/$d"
done
install -d -m 0700 "$r/root"
install -d -m 1777 "$r/tmp" "$r/var/tmp"

# --- busybox -------------------------------------------------------------
install -m 0755 "$busybox" "$r/bin/busybox"
applets=$("$list_busybox" --list-full)
# shellcheck disable=SC2046 # one word per directory
mkdir -p $(printf '%s\n' "$applets" | sed -n "s|^\(.*\)/[^/]*$|$r/\1|p" | sort -u)
while read -r applet; do
	[[ $applet == */* ]] || continue # linuxrc
	[[ -e $r/$applet || -L $r/$applet ]] && continue
	ln -s /bin/busybox "$r/$applet"
done <<<"$applets"
[[ -L $r/sbin/init ]] || ln -sfn /bin/busybox "$r/sbin/init"
# busybox has no "bash" applet; a user whose shell is /bin/bash gets ash.
put bin/bash 0755 <<'EOF'
#!/bin/sh
# cloudroot test image: no bash here, busybox ash stands in.
exec /bin/busybox sh "$@"
EOF

# --- e2fsprogs' resize2fs (with its shared libraries) ----------------------
# Real Debian images carry e2fsprogs; cloud-init's resizefs (and cloudroot's)
# runs resize2fs on the mounted root. Copied from the host with the
# libraries ldd names, at the same paths.
copy_with_libs() {
	local bin=$1 lib
	install -D -m 0755 "$bin" "$r$bin"
	while read -r lib; do
		[[ -n $lib && -e $lib ]] || continue
		mkdir -p "$r$(dirname "$lib")"
		cp -L "$lib" "$r$lib"
	done < <(ldd "$bin" | sed -n 's|.*=> \(/[^ ]*\).*|\1|p; s|^[[:space:]]*\(/[^ ]*\) (.*|\1|p')
}
resize2fs_bin=$(command -v resize2fs || true)
mke2fs_bin=$(command -v mke2fs || true)
if [[ $arch != "$host_arch" ]]; then
	# The host's e2fsprogs are of another architecture: take ARCH's from
	# Debian's packages (e2fsprogs and the libraries resize2fs and mke2fs
	# link), unpacked into the image at their own paths.
	resize2fs_bin= mke2fs_bin=
	e2dir=$cache/e2fsprogs-$arch
	e2pkgs=(e2fsprogs libext2fs2 libcom-err2 libblkid1 libuuid1 libc6)
	shopt -s nullglob
	have=("$e2dir"/*_"$arch".deb)
	shopt -u nullglob
	if ((${#have[@]} < ${#e2pkgs[@]})); then
		mkdir -p "$e2dir"
		sandbox=()
		[[ $(id -u) -ne 0 ]] || sandbox=(-o APT::Sandbox::User=root)
		(cd "$e2dir" && apt-get download -q "${sandbox[@]}" "${e2pkgs[@]/%/:$arch}") >&2 ||
			die "apt-get download e2fsprogs:$arch (and its libraries) failed"
	fi
	e2root=$(mktemp -d "$(dirname "$out")/.e2fsprogs.XXXXXX")
	rabs=$(cd "$r" && pwd)
	for d in "$e2dir"/*_"$arch".deb; do dpkg-deb -x "$d" "$e2root"; done
	rm -f "$r/sbin/mke2fs" "$r/sbin/resize2fs"
	install -D -m 0755 "$e2root/sbin/resize2fs" "$r/sbin/resize2fs"
	install -D -m 0755 "$e2root/sbin/mke2fs" "$r/sbin/mke2fs"
	for l in mkfs.ext2 mkfs.ext3 mkfs.ext4; do ln -sfn mke2fs "$r/sbin/$l"; done
	install -m 0644 "$e2root/etc/mke2fs.conf" "$r/etc/mke2fs.conf"
	(cd "$e2root" && find lib usr/lib -maxdepth 2 \( -name 'ld-linux-*' -o -name 'libc.so.6' -o -name 'libcom_err.so.2*' \
		-o -name 'libe2p.so.2*' -o -name 'libext2fs.so.2*' -o -name 'libblkid.so.1*' -o -name 'libuuid.so.1*' \) -print0 |
		xargs -0 cp -a --parents -t "$rabs")
	rm -rf "$e2root"
	log "e2fsprogs ($arch): resize2fs and mke2fs from $(basename "$(ls "$e2dir"/e2fsprogs_*.deb | tail -n 1)")"
fi
if [[ -n $resize2fs_bin ]]; then
	copy_with_libs "$(readlink -f "$resize2fs_bin")"
	[[ -e $r/sbin/resize2fs ]] || ln -sfn "$(readlink -f "$resize2fs_bin")" "$r/sbin/resize2fs"
else
	[[ $arch != "$host_arch" ]] || log "warning: resize2fs not found on the host; the image's resizefs will fail"
fi
# mke2fs for fs_setup (cloud-init runs mkfs.<type>), with Debian's
# mkfs.ext2/3/4 links; it replaces busybox's mke2fs applet. busybox's
# mkswap stays.
[[ -n $mke2fs_bin ]] && mke2fs_bin=$(readlink -f "$mke2fs_bin")
if [[ -n $mke2fs_bin && $mke2fs_bin != */busybox ]]; then
	rm -f "$r$mke2fs_bin"
	copy_with_libs "$mke2fs_bin"
	for l in mkfs.ext2 mkfs.ext3 mkfs.ext4; do
		ln -sfn mke2fs "$r$(dirname "$mke2fs_bin")/$l"
	done
	for d in /sbin /usr/sbin; do
		[[ $d == "$(dirname "$mke2fs_bin")" ]] && continue
		for l in mke2fs mkfs.ext2 mkfs.ext3 mkfs.ext4; do
			ln -sfn "$(dirname "$mke2fs_bin")/$l" "$r$d/$l"
		done
	done
	[[ -f /etc/mke2fs.conf ]] && install -m 0644 /etc/mke2fs.conf "$r/etc/mke2fs.conf"
else
	[[ $arch != "$host_arch" ]] || log "warning: mke2fs not found on the host; fs_setup cannot make ext filesystems in the image"
fi

# --- the agent -----------------------------------------------------------
mkdir -p "$r/usr/lib/cloudroot"
install -m 0755 "$agent" "$r/usr/lib/cloudroot/cloudroot-agent"
install -m 0755 "$front" "$r/usr/bin/cloudroot"
ln -sfn cloudroot "$r/usr/bin/cloud-init"
ln -sfn cloudroot "$r/usr/bin/cloud-id"
if [[ -d $repo/templates/systemd ]]; then
	shopt -s nullglob
	units=("$repo"/templates/systemd/*.service)
	shopt -u nullglob
	if ((${#units[@]} > 0)); then
		mkdir -p "$r/usr/lib/systemd/system"
		install -m 0644 "${units[@]}" "$r/usr/lib/systemd/system/"
	fi
fi

# --- init ----------------------------------------------------------------
put etc/inittab 0644 <<EOF
# busybox init. rcS runs cloudroot's config and final stages.
::sysinit:/etc/init.d/rcS
$console::respawn:/sbin/getty -L 115200 $console vt100
::ctrlaltdel:/sbin/reboot
::shutdown:/bin/sync
::shutdown:/bin/umount -a -r
EOF

put etc/init.d/rcS 0755 <<'EOF'
#!/bin/sh
# cloudroot test image: busybox init's sysinit script. After switch_root the
# initramfs has already mounted /dev, /proc, /sys and /run (and moved them);
# mount only what is missing.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

mounted() { grep -q "^[^ ]* $1 " /proc/mounts 2>/dev/null; }

mounted /proc || mount -t proc -o nosuid,nodev,noexec proc /proc
mounted /sys || mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mounted /dev || mount -t devtmpfs -o nosuid,mode=0755 devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mounted /dev/pts || mount -t devpts -o nosuid,noexec,gid=5,mode=0620 devpts /dev/pts
mounted /run || mount -t tmpfs -o nosuid,nodev,mode=0755 tmpfs /run
mount -o remount,rw / 2>/dev/null
mounted /tmp || mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
hostname -F /etc/hostname 2>/dev/null
ip link set lo up 2>/dev/null

echo "cloudroot-rootfs: sysinit ($(cut -d' ' -f1 /proc/uptime)s)"
# What cloudroot-hostkeys.service does under systemd, before sshd.
if [ -e /run/cloud-init/cloudroot/hostkeys-deferred ]; then
	/usr/lib/cloudroot/cloudroot-agent hostkeys
	echo "cloudroot-rootfs: hostkeys rc=$? ($(cut -d' ' -f1 /proc/uptime)s)"
fi
/usr/lib/cloudroot/cloudroot-agent modules --mode config
echo "cloudroot-rootfs: config stage rc=$? ($(cut -d' ' -f1 /proc/uptime)s)"
/usr/lib/cloudroot/cloudroot-agent modules --mode final
echo "cloudroot-rootfs: final stage rc=$? ($(cut -d' ' -f1 /proc/uptime)s)"

if grep -qw cloudroot.test.poweroff /proc/cmdline; then
	# What a script waiting on cloud-init would see.
	/usr/bin/cloud-init status --wait --long >/tmp/status.txt 2>&1
	rc=$?
	sed 's/^/cloudroot-rootfs| /' /tmp/status.txt
	echo "cloudroot-rootfs| cloud-init status rc=$rc"
	# What an operator would run next (integration: TestOperateInGuest).
	for c in "cloud-id --long" "cloud-init analyze blame"; do
		$c >/tmp/out.txt 2>&1
		rc=$?
		sed 's/^/cloudroot-rootfs| /' /tmp/out.txt
		echo "cloudroot-rootfs| $c rc=$rc"
	done
	/usr/bin/cloud-init analyze plot -o /var/log/cloudroot-boot.svg
	echo "cloudroot-rootfs| cloud-init analyze plot rc=$?"
	echo "cloudroot-rootfs: powering off (cloudroot.test.poweroff)"
	# Leave the filesystem clean (journal checkpointed), so tools that read
	# the image offline (debugfs) see what the guest wrote.
	sync
	mount -o remount,ro / 2>/dev/null
	poweroff -f
fi
EOF

# --- cloud-init configuration of the image ---------------------------------
# busybox's ifup has no ifquery and there is no netplan, networkd or
# NetworkManager here, so no cloud-init renderer applies: the image opts out
# of network configuration the standard way, as images with their own
# network setup do. (Network rendering is tested on purpose-built roots.)
put etc/cloud/cloud.cfg.d/99-disable-network-config.cfg 0644 <<'EOF'
network: {config: disabled}
EOF

# --- identity --------------------------------------------------------------
put etc/os-release 0644 <<'EOF'
PRETTY_NAME="cloudroot test image (Debian 12 compatible)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
EOF
echo 12.0 | put etc/debian_version 0644
# Debian's cloud images set the system locale; cc_locale then has nothing
# to regenerate (this image has no locale-gen, as it has no apt-get).
echo LANG=C.UTF-8 | put etc/default/locale 0644
echo cloudroot-image | put etc/hostname 0644
put etc/hosts 0644 <<'EOF'
127.0.0.1	localhost
::1		localhost ip6-localhost ip6-loopback
ff02::1		ip6-allnodes
ff02::2		ip6-allrouters
EOF
put etc/fstab 0644 <<'EOF'
# <file system>	<mount point>	<type>	<options>	<dump>	<pass>
LABEL=cloudimg-rootfs	/	ext4	defaults	0	1
EOF
put etc/nsswitch.conf 0644 <<'EOF'
passwd:         files
group:          files
shadow:         files
hosts:          files dns
EOF
put etc/shells 0644 <<'EOF'
/bin/sh
/bin/ash
/bin/bash
EOF

# --- accounts ------------------------------------------------------------
put etc/passwd 0644 <<'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/sbin/nologin
bin:x:2:2:bin:/bin:/sbin/nologin
sys:x:3:3:sys:/dev:/sbin/nologin
sshd:x:100:65534::/run/sshd:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
EOF
groups=(root:0 daemon:1 bin:2 sys:3 adm:4 tty:5 disk:6 dialout:20 cdrom:24 floppy:25
	sudo:27 audio:29 dip:30 shadow:42 video:44 plugdev:46 staff:50 users:100 netdev:101 nogroup:65534)
for g in "${groups[@]}"; do printf '%s:x:%s:\n' "${g%%:*}" "${g#*:}"; done | put etc/group 0644
for g in "${groups[@]}"; do printf '%s:*::\n' "${g%%:*}"; done | put etc/gshadow 0640
awk -F: '{ printf "%s:*:19700:0:99999:7:::\n", $1 }' "$r/etc/passwd" | put etc/shadow 0640
put etc/login.defs 0644 <<'EOF'
MAIL_DIR        /var/mail
PASS_MAX_DAYS   99999
PASS_MIN_DAYS   0
PASS_WARN_AGE   7
UID_MIN         1000
UID_MAX         60000
SYS_UID_MIN     100
SYS_UID_MAX     999
GID_MIN         1000
GID_MAX         60000
SYS_GID_MIN     100
SYS_GID_MAX     999
CREATE_HOME     yes
UMASK           022
USERGROUPS_ENAB yes
ENCRYPT_METHOD  SHA512
EOF
put etc/skel/.profile 0644 <<'EOF'
# ~/.profile: executed by login shells.
PATH="$HOME/bin:$HOME/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export PATH
EOF
cp -p "$r/etc/skel/.profile" "$r/root/.profile"
put etc/sudoers 0440 <<'EOF'
# cloudroot test image. Deliberately no "@includedir /etc/sudoers.d": cloud-init
# appends it when it writes a sudo rule there.
Defaults	env_reset
Defaults	secure_path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
root	ALL=(ALL:ALL) ALL
EOF
put etc/ssh/sshd_config 0644 <<'EOF'
# cloudroot test image (no sshd installed; the file is here for cloud-init's
# ssh and set_passwords modules to edit).
Include /etc/ssh/sshd_config.d/*.conf
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM yes
PrintMotd no
AcceptEnv LANG LC_*
Subsystem	sftp	/usr/lib/openssh/sftp-server
EOF

# --- the image -------------------------------------------------------------
# GPT: partition 1 from 1 MiB to 1 MiB before the end (room for the backup
# GPT), so both ends are 1 MiB aligned; or ROOTFS_PART_MB long.
part_start=$((1024 * 1024))
part_kib=$((part_mb * 1024))
rm -f "$out.tmp"
truncate -s "${size_mb}M" "$out.tmp"
sfdisk -q "$out.tmp" <<EOF
label: gpt
start=2048, size=$((part_kib * 2)), type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name="cloudimg-rootfs"
EOF
mkfs.ext4 -q -F -L cloudimg-rootfs -E "offset=$part_start,nodiscard,root_owner=0:0" -d "$r" "$out.tmp" "${part_kib}k"

# Owners and modes mkfs.ext4 -d cannot know: it copies the builder's uid/gid,
# and a non-root builder cannot chgrp to shadow.
{
	if [[ $(id -u) -ne 0 || $(id -g) -ne 0 ]]; then
		(cd "$r" && find . -mindepth 1) | while read -r p; do
			printf 'set_inode_field "%s" uid 0\nset_inode_field "%s" gid 0\n' "${p#.}" "${p#.}"
		done
	fi
	for f in /etc/shadow /etc/gshadow; do
		printf 'set_inode_field %s gid 42\nset_inode_field %s mode 0100640\n' "$f" "$f"
	done
} >"$cmds"
debugfs -w -f "$cmds" "$out.tmp?offset=$part_start" >/dev/null 2>"$cmds.err" || {
	cat "$cmds.err" >&2
	die "debugfs failed"
}
if grep -v '^debugfs ' "$cmds.err" | grep -q .; then
	cat "$cmds.err" >&2
	rm -f "$cmds.err"
	die "debugfs reported errors"
fi
rm -f "$cmds.err"
mv -f "$out.tmp" "$out"

t1=$(date +%s.%N)
used=$(du -k "$out" | cut -f1)
log "$out: ${size_mb} MiB image ($((used / 1024)) MiB allocated), ext4 cloudimg-rootfs in partition 1, $(find "$r" -mindepth 1 | wc -l) files, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
