#!/usr/bin/env bash
# scripts/goldens/analyze.sh — regenerate pkg/cli/testdata/analyze/*/want-*.txt with
# upstream cloud-init's `analyze show|blame|dump` (see docs/compatibility.md).
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/analyze.sh
#
# Each case directory holds a cloud-init.log (cloudroot-boot's is written by
# `go test ./pkg/stages -run TestCloudInitLogEvents -update`); each golden is
# upstream's stdout, then a line "exit: N" and upstream's stderr.
set -euo pipefail
. "$(dirname "$0")/lib/goldenlib.sh"
need_src analyze
for dir in "$repo"/pkg/cli/testdata/analyze/*/; do
	[[ -f $dir/cloud-init.log ]] || continue
	for sub in show blame dump boot; do
		set +e
		out=$(upstream analyze "$sub" -i "$dir/cloud-init.log" 2>"$dir/.stderr"; echo "exit: $?")
		set -e
		{ printf '%s\n' "$out"; cat "$dir/.stderr"; } >"$dir/want-$sub.txt"
		rm -f "$dir/.stderr"
	done
done
