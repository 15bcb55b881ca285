#!/usr/bin/env bash
# scripts/goldens/cli.sh — regenerate pkg/cli/testdata/cloudid/*/want-*.txt and
# pkg/cli/testdata/features/want.txt with upstream cloud-init's cloud-id and
# features (see docs/compatibility.md).
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/cli.sh     # as root
#
# Each case directory's run/ (status.json, instance-data.json, enabled or
# disabled) is copied into the sandbox's /run before cloud-id runs; each
# golden holds upstream's stdout, then "exit: N", then its stderr.
set -euo pipefail
. "$(dirname "$0")/lib/goldenlib.sh"
need_src cli
need_root cli "cloud-init's CLI runs in scripts/upstream-cloudinit.sh's unshare -m"
for dir in "$repo"/pkg/cli/testdata/cloudid/*/; do
	for flag in plain --long --json; do
		args=()
		[[ $flag != plain ]] && args=("$flag")
		setup="mkdir -p /run/cloud-init"
		[[ -d $dir/run ]] && setup="cp -a $dir/run/. /run/"
		set +e
		out=$(UPSTREAM_SETUP=$setup upstream --python -m cloudinit.cmd.cloud_id "${args[@]}" 2>"$dir/.stderr"; echo "exit: $?")
		set -e
		{ printf '%s\n' "$out"; cat "$dir/.stderr"; } >"$dir/want-${flag#--}.txt"
		rm -f "$dir/.stderr"
	done
done

mkdir -p "$repo/pkg/cli/testdata/features"
set +e
out=$(upstream features 2>/dev/null; echo "exit: $?")
set -e
printf '%s\n' "$out" >"$repo/pkg/cli/testdata/features/want.txt"

# clean: only options confined to the sandbox's tmpfs (see scripts/goldens/lib/clean.py).
cd_="$repo/pkg/cli/testdata/clean"
while read -r name fail args; do
	UPSTREAM_SETUP="CASE_FAIL=${fail#-} . $cd_/setup.sh" \
		upstream --python "$goldens/lib/clean.py" $args \
		>"$cd_/want-$name.txt" 2>/dev/null || true
done <<'CASES'
plain -
logs - --logs
logs-seed - -l -s
seed-only - --seed
runparts-fail 1 --logs
CASES
