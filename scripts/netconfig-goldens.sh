#!/usr/bin/env bash
# netconfig-goldens.sh — write upstream cloud-init's rendering of every
# pkg/netconfig golden case, the yardstick TestUpstream compares with.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/netconfig-goldens.sh [case ...]
#
# For each case directory in pkg/netconfig/testdata with an input
# (input.yaml, network_data.json or interfaces.eni) and each renderer
# (eni, netplan, networkd, sysconfig, network-manager) it runs upstream's
# `devel net-convert` code (one Python process, a forked child per
# conversion, two at a time) and replaces <case>/cloud-init-26/<renderer>/
# with what upstream wrote (see netconfig-goldens.py). The upstream version
# and source revision go to pkg/netconfig/testdata/cloud-init-26.txt.
#
# Needs root (scripts/upstream-cloudinit.sh runs cloud-init in its own mount
# namespace); the whole run is in a fresh network namespace too, so
# net-convert's lookups of live links (v2 match.macaddress) see only `lo`
# and the result does not depend on this machine. The ENI renderer writes
# `ip route` commands only when `ip` is installed where it runs (it is in
# any Debian with iproute2, the case the goldens record).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
src=${CLOUDINIT_SRC:?set CLOUDINIT_SRC to a canonical/cloud-init checkout}

if rev=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
	rev="commit $rev"
else
	# A source tree without .git: name it by the digest of its Python code.
	rev="source sha256 $(cd "$src" && find cloudinit -name '*.py' -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16)"
fi
export CLOUDINIT_REV=$rev

if [[ $(id -u) -ne 0 ]]; then
	echo "netconfig-goldens.sh: needs root (unshare for the network and mount namespaces)" >&2
	exit 2
fi
command -v ip >/dev/null || echo "netconfig-goldens.sh: warning: no 'ip' here, upstream's ENI renderer will write net-tools route commands" >&2

exec unshare -n -- "$here/upstream-cloudinit.sh" --python "$here/netconfig-goldens.py" \
	"$root/pkg/netconfig/testdata" "$root/pkg/netconfig/testdata/cloud-init-26.txt" "$@"
