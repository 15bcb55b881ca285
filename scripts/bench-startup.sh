#!/usr/bin/env bash
# bench-startup.sh — start-up of the agent as whole processes: each command
# is run BENCH_RUNS times (after one warm-up), and the median user+sys CPU
# and wall time (to the microsecond) and the largest peak RSS are printed (docs/performance.md, "Start-up"). Read-only commands
# on files in the repository's testdata; nothing is written outside a temp
# dir.
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
command -v python3 >/dev/null || { echo "bench-startup.sh: needs python3 (apt-get install python3)" >&2; exit 2; }
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

# measure PROGRAM ARGS...: prints "cpu_ms_median wall_ms_median peak_kib_max".
# The CPU (user+sys) and wall time of each run (after one warm-up) are
# wait4's, to the microsecond, of PROGRAM spawned by python with
# posix_spawn (vfork: nothing is copied before the exec; /usr/bin/time's
# %U and %S are in 10 ms steps, and as a parent it adds its own start-up to
# the rusage). The peak RSS is /usr/bin/time's %M over three more runs: a
# child vfork'd from python would count python's pages as its own. $tmp/out
# is emptied before each run.
measure() {
	python3 - "$runs" "$tmp/out" "$tmp/rss" "$@" <<'PY'
import os, shutil, statistics, subprocess, sys, time
runs, out, rssf, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
prog = shutil.which(argv[0])
null = os.open(os.devnull, os.O_RDWR)
acts = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
cpu, wall, rss = [], [], 0
for i in range(runs + 1):
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.monotonic()
    pid = os.posix_spawn(prog, argv, os.environ, file_actions=acts)
    _, _, ru = os.wait4(pid, 0)
    t1 = time.monotonic()
    if i > 0:
        cpu.append((ru.ru_utime + ru.ru_stime) * 1000)
        wall.append((t1 - t0) * 1000)
for i in range(3):
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(["/usr/bin/time", "-o", rssf, "-f", "%M"] + argv,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(rssf) as f:
        rss = max(rss, int(f.read().split()[-1]))
print("%.1f %.1f %d" % (statistics.median(cpu), statistics.median(wall), rss))
PY
}

up=()
if [[ -n ${BENCH_IN_NS:-} ]]; then
	up=(env PYTHONPATH="$BENCH_PYTHONPATH" /usr/bin/python3 -m cloudinit.cmd.main)
fi

# ratio A B [DECIMALS]: A/B with one decimal (or DECIMALS), "-" when B is 0
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { if (b > 0) printf "%.*f", d, a / b; else printf "-" }'; }

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
		printf ' | %7s %7s %8s | %7s %7s  %s' "$ucpu" "$uwall" "$urss" "$(ratio "$ucpu" "$cpu")" "$(ratio "$rss" "$urss" 2)" "${goal:+$goal, }rss<=0.25x"
	fi
	echo
done
