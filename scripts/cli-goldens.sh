#!/usr/bin/env bash
# cli-goldens.sh — regenerate pkg/cli/testdata/cloudid/*/want-*.txt and
# pkg/cli/testdata/features/want.txt with upstream cloud-init's cloud-id and
# features (see docs/compatibility.md).
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/cli-goldens.sh     # as root
#
# Each case directory's run/ (status.json, instance-data.json, enabled or
# disabled) is copied into the sandbox's /run before cloud-id runs; each
# golden holds upstream's stdout, then "exit: N", then its stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
for dir in "$here"/pkg/cli/testdata/cloudid/*/; do
	for flag in plain --long --json; do
		args=()
		[[ $flag != plain ]] && args=("$flag")
		setup="mkdir -p /run/cloud-init"
		[[ -d $dir/run ]] && setup="cp -a $dir/run/. /run/"
		set +e
		out=$(UPSTREAM_SETUP=$setup "$here/scripts/upstream-cloudinit.sh" --python -m cloudinit.cmd.cloud_id "${args[@]}" 2>"$dir/.stderr"; echo "exit: $?")
		set -e
		{ printf '%s\n' "$out"; cat "$dir/.stderr"; } >"$dir/want-${flag#--}.txt"
		rm -f "$dir/.stderr"
	done
done

mkdir -p "$here/pkg/cli/testdata/features"
set +e
out=$("$here/scripts/upstream-cloudinit.sh" features 2>/dev/null; echo "exit: $?")
set -e
printf '%s\n' "$out" >"$here/pkg/cli/testdata/features/want.txt"

# clean: only options confined to the sandbox's tmpfs (see clean-goldens.py).
cd_="$here/pkg/cli/testdata/clean"
while read -r name fail args; do
	UPSTREAM_SETUP="CASE_FAIL=${fail#-} . $cd_/setup.sh" \
		"$here/scripts/upstream-cloudinit.sh" --python "$here/scripts/clean-goldens.py" $args \
		>"$cd_/want-$name.txt" 2>/dev/null || true
done <<'CASES'
plain -
logs - --logs
logs-seed - -l -s
seed-only - --seed
runparts-fail 1 --logs
CASES
