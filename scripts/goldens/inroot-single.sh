#!/usr/bin/env bash
# scripts/goldens/inroot-single.sh — upstream 26.x's `cloud-init single` (and
# the inroot-nostate command lines) in a throwaway chroot of the cloud-init
# twin's Debian 12 root, recorded per case as
# pkg/cli/testdata/inroot-{single,nostate}/<case>/upstream.txt for pkg/cli's
# TestInRootSingleUpstream (lib/inroot-single.py says what is recorded and how
# the run is confined: its own mount, network, UTS and PID namespaces, an
# overlay over the root, tmpfs over /run, /var/lib/cloud and /var/log,
# datasource_list [None]).
#
#   just goldens inroot-single
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/inroot-single.sh   # as root
#
# The root is the newest $CLOUDROOT_CACHE/debian-12-cloud-init-*.tar.zst
# (DEBIAN_IMAGE_VARIANT=cloud-init scripts/debian-image.sh builds it, as
# just bench-vs-cloud-init does), extracted into a temporary directory.
# CASES="a b" limits the run to those cases.
set -euo pipefail
. "$(dirname "$0")/lib/goldenlib.sh"
need_src inroot-single
need_root inroot-single "unshare, overlay and tmpfs mounts in a private namespace"
cache=${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot}
tarball=$(ls -t "$cache"/debian-12-cloud-init-*.tar.zst 2>/dev/null | head -n 1 || true)
[[ -n $tarball ]] || { echo "inroot-single: no $cache/debian-12-cloud-init-*.tar.zst (DEBIAN_IMAGE_VARIANT=cloud-init scripts/debian-image.sh builds it)" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/inroot-single.XXXXXX")
trap 'rm -rf --one-file-system "$root"' EXIT
tar -I zstd -xpf "$tarball" -C "$root"
# upstream from the copy scripts/upstream-cloudinit.sh prepares (it has cloudinit/meson_versions.py).
prepared=$(upstream --pythonpath)
for set in inroot-single inroot-nostate; do
	CLOUDINIT_SRC=$prepared python3 "$goldens/lib/inroot-single.py" \
		"$root" "$repo/pkg/cli/testdata/$set" "$repo/pkg/modules/testdata/modgolden/os"
done
