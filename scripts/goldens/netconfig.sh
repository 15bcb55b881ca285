#!/usr/bin/env bash
# scripts/goldens/netconfig.sh — write upstream cloud-init's rendering of every
# pkg/netconfig golden case, the yardstick TestUpstream compares with.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/netconfig.sh [case ...]
#
# For each case directory in pkg/netconfig/testdata with an input
# (input.yaml, network_data.json or interfaces.eni) and each renderer
# (eni, netplan, networkd, sysconfig, network-manager) it runs upstream's
# `devel net-convert` code (one Python process, a forked child per
# conversion, two at a time) and replaces <case>/cloud-init-26/<renderer>/
# with what upstream wrote (see scripts/goldens/lib/netconfig.py). The upstream version
# and source revision go to pkg/netconfig/testdata/cloud-init-26.txt.
#
# Needs root (scripts/upstream-cloudinit.sh runs cloud-init in its own mount
# namespace); the whole run is in a fresh network namespace too, so
# net-convert's lookups of live links (v2 match.macaddress) see only `lo`
# and the result does not depend on this machine. The ENI renderer writes
# `ip route` commands only when `ip` is installed where it runs (it is in
# any Debian with iproute2, the case the goldens record).
set -euo pipefail

. "$(dirname "$0")/lib/goldenlib.sh"
need_src netconfig
src=$CLOUDINIT_SRC

if rev=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
	rev="commit $rev"
else
	# A source tree without .git: name it by the digest of its Python code.
	rev="source sha256 $(cd "$src" && find cloudinit -name '*.py' -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16)"
fi
export CLOUDINIT_REV=$rev

need_root netconfig "unshare for the network and mount namespaces"
command -v ip >/dev/null || echo "scripts/goldens/netconfig.sh: warning: no 'ip' here, upstream's ENI renderer will write net-tools route commands" >&2

exec unshare -n -- "$repo/scripts/upstream-cloudinit.sh" --python "$goldens/lib/netconfig.py" \
	"$repo/pkg/netconfig/testdata" "$repo/pkg/netconfig/testdata/cloud-init-26.txt" "$@"
