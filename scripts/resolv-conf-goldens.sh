#!/usr/bin/env bash
# resolv-conf-goldens.sh — render upstream cloud-init's resolv.conf and
# systemd.resolved.conf templates, through cc_resolv_conf's own parameter
# handling, for every pkg/modules/testdata/resolv-upstream/cases/*.yaml into
# pkg/modules/testdata/resolv-upstream/out/<case>/. TestResolvConfUpstream
# renders cloudroot's templates (templates/resolv, its own header wording)
# and requires the same text below the header comment.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/resolv-conf-goldens.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${CLOUDINIT_SRC:?set CLOUDINIT_SRC to a canonical/cloud-init checkout}"
dir=$repo/pkg/modules/testdata/resolv-upstream
rm -rf "$dir/out"
mkdir -p "$dir/out"
"$here/upstream-cloudinit.sh" --python "$here/resolv-conf-goldens.py" "$CLOUDINIT_SRC" "$dir/out" "$dir"/cases/*.yaml
echo "wrote $(find "$dir/out" -type f | wc -l) files to $dir/out"
