#!/usr/bin/env bash
# cloudcfg-goldens.sh — render upstream cloud-init's default /etc/cloud/cloud.cfg
# (config/cloud.cfg.tmpl) for every variant upstream's tools/render-template
# accepts, with upstream's own templater, into pkg/distro/testdata/cloudcfg/<variant>.cfg.
# pkg/distro's golden test compares DefaultCloudConfig with these as YAML data.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/cloudcfg-goldens.sh
#
# Rendering is a pure templater call (no cloud-init stage runs); it goes
# through scripts/upstream-cloudinit.sh --python like every other golden.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
src=${CLOUDINIT_SRC:?set CLOUDINIT_SRC to a canonical/cloud-init checkout}
out=$repo/pkg/distro/testdata/cloudcfg
mkdir -p "$out"

# The variant list is upstream's: read it from tools/render-template.
mapfile -t variants < <(sed -n '/VARIANTS = \[/,/\]/p' "$src/tools/render-template" | sed -n 's/^ *"\([^"]*\)",\{0,1\}$/\1/p')
if ((${#variants[@]} == 0)); then
	echo "cloudcfg-goldens.sh: no VARIANTS found in $src/tools/render-template" >&2
	exit 1
fi
ver=$("$here/upstream-cloudinit.sh" --version-of-source)

py=$(mktemp --suffix=.py)
trap 'rm -f "$py"' EXIT
cat >"$py" <<'PY'
import sys
from cloudinit import templater
tmpl, variant, dest = sys.argv[1:4]
# Exactly what tools/render-template does (is_yaml=True validates the YAML).
templater.render_template(variant, tmpl, dest, True, prefix="/usr")
PY

for v in "${variants[@]}"; do
	[[ $v == benchmark ]] && continue # upstream's performance-test variant, not a distro
	"$here/upstream-cloudinit.sh" --python "$py" "$src/config/cloud.cfg.tmpl" "$v" "$out/$v.cfg.tmp"
	{
		printf '# Rendered by scripts/cloudcfg-goldens.sh from cloud-init %s config/cloud.cfg.tmpl (variant %s).\n' "$ver" "$v"
		cat "$out/$v.cfg.tmp"
	} >"$out/$v.cfg"
	rm -f "$out/$v.cfg.tmp"
	echo "$v"
done
