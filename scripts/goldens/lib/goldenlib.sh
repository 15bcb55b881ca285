# goldenlib.sh — sourced by the scripts/goldens/AREA.sh generators (see
# lib/goldenlib.py for the layout of an area). Sets
#   repo     the repository root (absolute)
#   goldens  scripts/goldens (absolute); its Python parts are in $goldens/lib
# and defines
#   upstream ARGS...   scripts/upstream-cloudinit.sh ARGS... (cloud-init 26.2
#                      from CLOUDINIT_SRC in its throwaway namespace)
#   need_src NAME      exits 2 unless CLOUDINIT_SRC is an unpacked cloud-init
#   need_root NAME WHY exits 2 unless run as root
# Set order of every Python process the area starts (see goldenlib.py).
export PYTHONHASHSEED=0
goldens=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$goldens/../.." && pwd)
upstream() { "$repo/scripts/upstream-cloudinit.sh" "$@"; }
need_src() {
	[[ -n ${CLOUDINIT_SRC:-} && -f $CLOUDINIT_SRC/cloudinit/version.py ]] && return 0
	echo "$1: set CLOUDINIT_SRC to a canonical/cloud-init checkout (or run it with just goldens AREA)" >&2
	exit 2
}
need_root() {
	[[ $(id -u) -eq 0 ]] && return 0
	echo "$1: needs root ($2)" >&2
	exit 2
}
