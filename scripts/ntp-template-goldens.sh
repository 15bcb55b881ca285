#!/usr/bin/env bash
# ntp-template-goldens.sh — render upstream cloud-init's NTP client
# templates with upstream's templater and fixed servers/pools/peers/allow
# into pkg/modules/testdata/ntp-upstream/<template name>. pkg/modules'
# TestNTPTemplatesUpstream renders cloudroot's own templates (templates/ntp,
# its own wording) with the same parameters and requires the same
# configuration lines (comments and blank lines aside).
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/ntp-template-goldens.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${CLOUDINIT_SRC:?set CLOUDINIT_SRC to a canonical/cloud-init checkout}"
out=$repo/pkg/modules/testdata/ntp-upstream
rm -rf "$out"
mkdir -p "$out"
"$here/upstream-cloudinit.sh" --python "$here/ntp-template-goldens.py" "$CLOUDINIT_SRC" "$out"
echo "wrote $(ls "$out" | wc -l) files to $out"
