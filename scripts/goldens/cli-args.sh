#!/usr/bin/env bash
# scripts/goldens/cli-args.sh — regenerate the upstream goldens of pkg/cli: every
# case directory of pkg/cli/testdata/<command>/<case>/ that holds an
# `upstream` marker file.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/cli-args.sh [CASE_DIR...]   # as root
#
# (all marked cases, or only the case directories given).
#
# Command cases (want.stdout, want.stderr, want.rc): upstream cloud-init's
# command line (scripts/goldens/lib/cli-main.py, prog "cloud-init") runs with the case's
# `args` (one argument a line, $CASE standing for the case directory) in
# the sandbox of scripts/upstream-cloudinit.sh. Only cases whose answer
# does not depend on the machine are marked: argument errors, --help,
# --version, and `schema -c` on documents in the case directory (among
# them schema/net-*: network-config v1 and v2, validated by upstream's
# no-netplan path since the sandbox has no netplan).
#
# status cases (want.tabular, want.long, want.json, want.yaml, want.rc):
# the case's run/ is copied over the sandbox's empty /run (so there is no
# /run/systemd/system unless the case has one) and `status`, `status
# --long`, `status --format json`, `status --format=yaml` run.
#
# status-wait cases (want.long, want.json, want.rc): the case's run/ is
# copied in, `status --wait --long` and `status --wait --format json` start,
# and six seconds later flip/ is copied over /run (the stages finish while
# cloud-init waits). The dots `--wait` prints per poll (a number that
# depends on timing) are masked to "...".
#
# status outputs have last_update masked to $LAST_UPDATE (see
# mask_last_update).
#
# Outputs are kept as upstream printed them under Debian 12's Python 3.11
# (its argparse quotes choices: "(choose from 'a', 'b')"), with two
# masks: the case directory becomes $CASE, and the version printed by
# --version becomes $VERSION (cloudroot reports its own).
set -euo pipefail
. "$(dirname "$0")/lib/goldenlib.sh"
need_src cli-args
need_root cli-args "cloud-init's CLI runs in scripts/upstream-cloudinit.sh's unshare -m"
# last_update: cloudroot prints the real time of the last stage event where
# cloud-init formats uptimes as epoch times (docs/compatibility.md).
mask_last_update() {
	sed -i -E 's/(last_update"?: "?)[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} \+0000/\1$LAST_UPDATE/' "$@"
}
up() { upstream --python "$goldens/lib/cli-main.py" "$@"; }
markers=("$repo"/pkg/cli/testdata/*/*/upstream)
if (($#)); then
	markers=()
	for d in "$@"; do markers+=("$(cd "$d" && pwd)/upstream"); done
fi
for marker in "${markers[@]}"; do
	dir=$(dirname "$marker")
	if [[ $dir == */testdata/status-wait/* ]]; then
		export UPSTREAM_SETUP="cp -a $dir/run/. /run/; (sleep 6; cp -a $dir/flip/. /run/) &"
		set +e
		up status --wait --long >"$dir/want.long" 2>/dev/null </dev/null
		echo $? >"$dir/want.rc"
		up status --wait --format json >"$dir/want.json" 2>/dev/null </dev/null
		set -e
		unset UPSTREAM_SETUP
		sed -i '1s/^\.\.*/.../' "$dir/want.long"
		mask_last_update "$dir"/want.{long,json}
		continue
	fi
	if [[ $dir == */testdata/status/* ]]; then
		export UPSTREAM_SETUP="cp -a $dir/run/. /run/ 2>/dev/null || true"
		set +e
		up status >"$dir/want.tabular" 2>/dev/null </dev/null
		echo $? >"$dir/want.rc"
		up status --long >"$dir/want.long" 2>/dev/null </dev/null
		up status --format json >"$dir/want.json" 2>/dev/null </dev/null
		up status --format=yaml >"$dir/want.yaml" 2>/dev/null </dev/null
		set -e
		unset UPSTREAM_SETUP
		mask_last_update "$dir"/want.{tabular,long,json,yaml}
		continue
	fi
	args=()
	while IFS= read -r l; do
		args+=("${l//\$CASE/$dir}")
	done <"$dir/args"
	set +e
	up "${args[@]}" >"$dir/want.stdout" 2>"$dir/want.stderr" </dev/null
	echo $? >"$dir/want.rc"
	set -e
	for f in want.stdout want.stderr; do
		sed -i "s|$dir|\$CASE|g" "$dir/$f"
		if grep -qx -- '--version\|-v\|-dv' "$dir/args"; then
			sed -i -E 's/^(cloud-init) [0-9][0-9.a-z+~-]*$/\1 $VERSION/' "$dir/$f"
		fi
	done
done
