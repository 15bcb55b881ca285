#!/usr/bin/env bash
# bench-startup.sh — start-up of the agent as whole processes: each command
# is run BENCH_RUNS times (after one warm-up) under /usr/bin/time, and the
# median user+sys CPU, median wall time and the largest peak RSS are printed
# (docs/performance.md, "Start-up"). Read-only commands on files in the
# repository's testdata; nothing is written outside a temp dir.
#
#   scripts/bench-startup.sh BUILD_DIR            (just bench-startup)
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/bench-startup.sh BUILD_DIR   # as root
#
# With CLOUDINIT_SRC (and root), the same commands of upstream cloud-init are
# timed beside, through scripts/upstream-cloudinit.sh (unshare -m, tmpfs over
# /run, /var/lib/cloud, /var/log and /etc/cloud; datasource_list: [None]);
# its figures include that wrapper (bash, unshare, mounts: a few ms).
#
# cloudroot-init is not timed: it is PID 1 of the initramfs and is never run
# on a host.
set -euo pipefail

build=${1:?usage: bench-startup.sh BUILD_DIR}
runs=${BENCH_RUNS:-11}
cr=$build/cloudroot
[[ -x $cr ]] || { echo "bench-startup.sh: $cr not built (just agent)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench-startup.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

td=$repo/pkg/cli/testdata
# name | arguments (after the program)
cases=(
	"--version|--version"
	"status|status"
	"query|query --instance-data $td/query/_trees/nocloud/run/cloud-init/instance-data.json --format {{cloud_name}}-{{v1.local_hostname}}"
	"schema|schema --config-file $td/schema/annotate-valid/cfg.yaml"
	"net-convert|devel net-convert --network-data $repo/pkg/netconfig/testdata/eni-static/interfaces.eni --kind eni --distro debian --output-kind netplan --directory $tmp/out"
	"analyze|analyze show --infile $td/analyze/two-boots/cloud-init.log"
)

# measure PROGRAM ARGS...: prints "cpu_ms_median wall_ms_median peak_kib_max"
measure() {
	local i out=$tmp/time.txt
	: >"$tmp/samples"
	for ((i = 0; i <= runs; i++)); do
		/usr/bin/time -o "$out" -f '%U %S %e %M' "$@" >/dev/null 2>&1 </dev/null || true
		((i == 0)) && continue
		tail -1 "$out" >>"$tmp/samples"
	done
	awk '{cpu[NR]=($1+$2)*1000; wall[NR]=$3*1000; if ($4>rss) rss=$4}
		function med(a, n,   i,j,t) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}
			return (n%2) ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
		END { printf "%.0f %.0f %d\n", med(cpu, NR), med(wall, NR), rss }' "$tmp/samples"
}

up=()
if [[ -n ${CLOUDINIT_SRC:-} && $(id -u) -eq 0 ]]; then
	up=(bash "$repo/scripts/upstream-cloudinit.sh")
fi

echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs; cpu/wall ms medians, peak RSS KiB max"
printf '%-12s %8s %8s %9s' command cpu_ms wall_ms rss_kib
((${#up[@]})) && printf ' | %8s %8s %9s' up_cpu up_wall up_rss
echo
for c in "${cases[@]}"; do
	name=${c%%|*}
	read -r -a args <<<"${c#*|}"
	rm -rf "$tmp/out"
	read -r cpu wall rss < <(measure "$cr" "${args[@]}")
	printf '%-12s %8s %8s %9s' "$name" "$cpu" "$wall" "$rss"
	if ((${#up[@]})); then
		read -r ucpu uwall urss < <(measure "${up[@]}" "${args[@]}")
		printf ' | %8s %8s %9s' "$ucpu" "$uwall" "$urss"
	fi
	echo
done
