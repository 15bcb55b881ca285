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
# With CLOUDINIT_SRC (and root), the same commands of upstream cloud-init
# run beside: the script re-runs itself in a private mount namespace
# (unshare -m, tmpfs over /run, /var/lib/cloud, /var/log and /etc/cloud,
# `datasource_list: [None]`, as scripts/upstream-cloudinit.sh does) and
# times `python3 -m cloudinit.cmd.main ARGS` from the wrapper's prepared
# copy of the source, bytecode cached after the warm-up run — cloud-init's
# own process from start to exit, as a packaged cloud-init runs. The ratio
# columns are upstream CPU / cloudroot CPU and cloudroot RSS / upstream RSS,
# beside issue 27's goals (>= 30x for schema, status, query, net-convert;
# RSS <= 0.25x). `schema` checks cloud-init's largest example
# (doc/examples/cloud-config.txt) when CLOUDINIT_SRC is set.
#
# build/cloudroot is the front binary (/usr/bin/cloudroot and cloud-init):
# it answers --version, status, query, schema, analyze, cloud-id, features
# and devel (but hotplug-hook) itself and execs build/cloudroot-agent for every other command, so that
# row (single --help) is both processes, as a user pays it; `agent
# --version` is the full agent alone.
#
# Rows without an upstream: `agent --version`, `cloudroot-init --version` (PID 1 of the
# initramfs: with --version it prints and exits before mounting anything)
# and `go-floor`, a Go program that only prints (the runtime's own start-up
# on this machine: nothing a Go binary does can start faster).
#
# BENCH_ONLY='schema|query' times only the commands whose name matches that
# extended regular expression (anchored), e.g. while working on one of them.
set -euo pipefail

build=${1:?usage: bench-startup.sh BUILD_DIR}
build=$(cd "$build" && pwd)
runs=${BENCH_RUNS:-11}
cr=$build/cloudroot
[[ -x $cr ]] || { echo "bench-startup.sh: $cr not built (just agent)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench-startup.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)

# Upstream: prepare the copy, then re-run this script in its own namespace.
if [[ -n ${CLOUDINIT_SRC:-} && $(id -u) -eq 0 && -z ${BENCH_IN_NS:-} ]]; then
	pp=$(bash "$repo/scripts/upstream-cloudinit.sh" --pythonpath)
	export BENCH_IN_NS=1 BENCH_PYTHONPATH=$pp
	exec unshare -m --propagation private -- bash "$0" "$build"
fi
if [[ -n ${BENCH_IN_NS:-} ]]; then
	for d in /run /var/lib/cloud /var/log /etc/cloud; do
		mkdir -p "$d"
		mount -t tmpfs -o mode=0755 tmpfs "$d"
	done
	mkdir -p /etc/cloud/cloud.cfg.d
	printf "datasource_list: [None]\n" >/etc/cloud/cloud.cfg.d/99-cloudroot-none.cfg
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The Go floor: a program that only prints, built like the agent.
mkdir -p "$tmp/floor"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("floor\\n") }\n' >"$tmp/floor/main.go"
printf 'module floor\n\ngo 1.26\n' >"$tmp/floor/go.mod"
floor=
if (cd "$tmp/floor" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o floor . 2>/dev/null); then
	floor=$tmp/floor/floor
fi

td=$repo/pkg/cli/testdata
big=$td/schema/annotate-valid/cfg.yaml
if [[ -n ${CLOUDINIT_SRC:-} && -f $CLOUDINIT_SRC/doc/examples/cloud-config.txt ]]; then
	big=$CLOUDINIT_SRC/doc/examples/cloud-config.txt
fi
# name | program (cr, agent, init, floor) | upstream too (y/n) | arguments
cases=(
	"go-floor|floor|n|"
	"--version|cr|y|--version"
	"agent --version|agent|n|--version"
	"init --version|init|n|--version"
	"status|cr|y|status"
	"status --long|cr|y|status --long"
	"query|cr|y|query --instance-data $td/query/_trees/nocloud/run/cloud-init/instance-data.json --format {{cloud_name}}-{{v1.local_hostname}}"
	"schema|cr|y|schema --config-file $big"
	"net-convert|cr|y|devel net-convert --network-data $repo/pkg/netconfig/testdata/eni-static/interfaces.eni --kind eni --distro debian --output-kind netplan --directory $tmp/out"
	"analyze show|cr|y|analyze show --infile $td/analyze/two-boots/cloud-init.log"
	"single --help|cr|y|single --help"
)

# measure PROGRAM ARGS...: prints "cpu_ms_median wall_ms_median peak_kib_max"
measure() {
	local i out=$tmp/time.txt
	: >"$tmp/samples"
	for ((i = 0; i <= runs; i++)); do
		rm -rf "$tmp/out"
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
if [[ -n ${BENCH_IN_NS:-} ]]; then
	up=(env PYTHONPATH="$BENCH_PYTHONPATH" /usr/bin/python3 -m cloudinit.cmd.main)
fi

# ratio A B: A/B with one decimal, "-" when B is 0 (below /usr/bin/time's 10 ms)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else printf "-" }'; }

echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs; cpu/wall ms medians, peak RSS KiB max"
printf '%-14s %7s %7s %8s' command cpu_ms wall_ms rss_kib
((${#up[@]})) && printf ' | %7s %7s %8s | %7s %7s  goal' up_cpu up_wall up_rss cpu_x rss_x
echo
for c in "${cases[@]}"; do
	IFS='|' read -r name prog hasup argstr <<<"$c"
	[[ -z ${BENCH_ONLY:-} || $name =~ ^(${BENCH_ONLY})$ ]] || continue
	read -r -a args <<<"$argstr"
	case $prog in
	cr) bin=$cr ;;
	agent) bin=$build/cloudroot-agent ;;
	init) bin=$build/cloudroot-init ;;
	floor) bin=$floor ;;
	esac
	[[ -n $bin && -x $bin ]] || continue
	read -r cpu wall rss < <(measure "$bin" "${args[@]}")
	printf '%-14s %7s %7s %8s' "$name" "$cpu" "$wall" "$rss"
	if ((${#up[@]})) && [[ $hasup == y ]]; then
		read -r ucpu uwall urss < <(measure "${up[@]}" "${args[@]}")
		goal=
		case $name in schema | status | query | net-convert) goal="cpu>=30x" ;; esac
		printf ' | %7s %7s %8s | %7s %7s  %s' "$ucpu" "$uwall" "$urss" "$(ratio "$ucpu" "$cpu")" "$(ratio "$rss" "$urss")" "${goal:+$goal, }rss<=0.25x"
	fi
	echo
done
