#!/usr/bin/env bash
# scripts/goldens/cloudcfg.sh — render upstream cloud-init's default /etc/cloud/cloud.cfg
# (config/cloud.cfg.tmpl) for every variant upstream's tools/render-template
# accepts, with upstream's own templater, into pkg/distro/testdata/cloudcfg/<variant>.cfg.
# pkg/distro's golden test compares DefaultCloudConfig with these as YAML data.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/cloudcfg.sh
#
# Rendering is a pure templater call (no cloud-init stage runs); it goes
# through scripts/upstream-cloudinit.sh --python like every other golden.
set -euo pipefail

. "$(dirname "$0")/lib/goldenlib.sh"
need_src cloudcfg
src=$CLOUDINIT_SRC
out=$repo/pkg/distro/testdata/cloudcfg
mkdir -p "$out"

# The variant list is upstream's: read it from tools/render-template.
mapfile -t variants < <(sed -n '/VARIANTS = \[/,/\]/p' "$src/tools/render-template" | sed -n 's/^ *"\([^"]*\)",\{0,1\}$/\1/p')
if ((${#variants[@]} == 0)); then
	echo "scripts/goldens/cloudcfg.sh: no VARIANTS found in $src/tools/render-template" >&2
	exit 1
fi
ver=$(upstream --version-of-source)

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
	upstream --python "$py" "$src/config/cloud.cfg.tmpl" "$v" "$out/$v.cfg.tmp"
	{
		# The header names the generator's old path: the goldens stay byte-identical across its move.
		printf '# Rendered by scripts/cloudcfg-goldens.sh from cloud-init %s config/cloud.cfg.tmpl (variant %s).\n' "$ver" "$v"
		cat "$out/$v.cfg.tmp"
	} >"$out/$v.cfg"
	rm -f "$out/$v.cfg.tmp"
	echo "$v"
done
