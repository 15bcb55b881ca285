#!/usr/bin/env bash
# scripts/goldens/distro.sh — record what upstream cloud-init's distro classes run
# (package update/upgrade/install argv, manage_service argv, set_timezone's
# file operations) and the facts they hold (localhost address, hostname
# file, sudoers drop-in, cc_ntp's client table and preference), per
# distro and init system, into pkg/distro/testdata/upstream/<case>.json.
# pkg/distro's TestUpstreamDistroGoldens holds its facts and command
# builders to them.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/distro.sh
#
# Nothing is run or written outside the output directory: the Python side
# (scripts/goldens/lib/distro.py) replaces subp and the file helpers with
# recorders, under scripts/upstream-cloudinit.sh --python.
set -euo pipefail

. "$(dirname "$0")/lib/goldenlib.sh"
need_src distro
out=$repo/pkg/distro/testdata/upstream
# apt installs from a Python set: a fixed hash seed keeps the goldens stable.
export PYTHONHASHSEED=0
mkdir -p "$out"

# case              class    os-release ID  VERSION_ID init     dnf on PATH
cases=(
	"debian-12          debian   debian         12         systemd  nodnf"
	"devuan-5           debian   devuan         5          sysvinit nodnf"
	"ubuntu-24.04       ubuntu   ubuntu         24.04      systemd  nodnf"
	"rhel-9             rhel     rhel           9.4        systemd  dnf"
	"rhel-6-sysvinit    rhel     rhel           6.10       sysvinit nodnf"
	"centos-7           centos   centos         7          systemd  nodnf"
	"rocky-9            rocky    rocky          9.4        systemd  dnf"
	"almalinux-9        almalinux almalinux     9.4        systemd  dnf"
	"fedora-40          fedora   fedora         40         systemd  dnf"
	"amzn-2             amazon   amzn           2          systemd  nodnf"
	"photon-5           photon   photon         5.0        systemd  dnf"
	"mariner-2          mariner  mariner        2.0        systemd  dnf"
	"opensuse-leap-15.6 suse     opensuse-leap  15.6       systemd  nodnf"
	"opensuse-leap-15.6-sysvinit suse opensuse-leap 15.6   sysvinit nodnf"
	"sles-12            suse     sles           12.5       systemd  nodnf"
	"alpine-3.20        alpine   alpine         3.20.3     openrc   nodnf"
	"arch               arch     arch           rolling    systemd  nodnf"
	"gentoo             gentoo   gentoo         2.15       openrc   nodnf"
	"gentoo-systemd     gentoo   gentoo         2.15       systemd  nodnf"
	"freebsd-14         freebsd  freebsd        14.1       bsdrc    nodnf"
)
for c in "${cases[@]}"; do
	read -r name class id ver init dnf <<<"$c"
	upstream --python "$goldens/lib/distro.py" "$class" "$id" "$ver" "$init" "$dnf" \
		>"$out/$name.json.tmp" 2>"$out/$name.err" || { cat "$out/$name.err" >&2; exit 1; }
	mv "$out/$name.json.tmp" "$out/$name.json"
	rm -f "$out/$name.err"
	echo "$name"
done
