#!/usr/bin/env bash
# Time cloudroot against cloud-init on the same large user-data
# (docs/performance.md, "User-data and configuration against cloud-init").
#
# WARNING: this script INSTALLS Debian's cloud-init package (and hyperfine)
# with apt-get, because the comparison needs cloud-init's CLI and Python
# library. It must run as root on a Debian 12 machine with nothing that would
# start cloud-init (a container or a build machine, not a VM you care about).
# Packages it installed itself are purged again on exit, except hyperfine
# (set BENCH_KEEP=1 to keep cloud-init too). Installing cloud-init starts
# nothing; the script only runs cloud-init's read-only subcommands (schema,
# devel make-mime, query -i, devel render -i) and its library in a temp dir.
#
# What it measures, each on the same input bytes for both tools:
#   * schema --config-file big.yaml      (1 #cloud-config: 100 users,
#                                         2,000 write_files, 5,000 runcmd)
#   * devel make-mime -a ... (210 parts: 200 cloud-configs, 10 scripts)
#   * query -i idata.json -u ud.mime -v vd.txt --all   (plain and gzipped)
#   * devel render -i idata.json tmpl.yaml (jinja: loop of 1,000 write_files)
#   * parse + merge of the MIME user-data (no CLI in either tool):
#       cloud-init: UserDataProcessor.process + handlers.walk +
#                   CloudConfigPartHandler (util.load_yaml + mergers), timed
#                   in-process and as a whole python3 run;
#       cloudroot:  go test -bench BenchmarkCorpusProcessMerge (userdata.Process
#                   + cloudcfg.MergePart), fed cloud-init's make-mime bytes.
# CLI commands are timed with hyperfine (warm cache, BENCH_WARMUP warm-up runs,
# BENCH_RUNS timed runs, medians). The corpus comes from
# pkg/userdata/bench_cli_test.go (TestWriteBenchCorpus), so it is
# deterministic. Before timing, the script checks that both tools agree:
# same merged cloud-config, same rendered template, both schemas valid.
#
# Usage: bash scripts/bench-cloudinit.sh      (as root, from anywhere)
# Env:   BENCH_RUNS (default 20), BENCH_WARMUP (3), BENCH_GO_COUNT (10),
#        BENCH_DIR (default: a new temp dir, kept), BENCH_KEEP=1.
set -euo pipefail

RUNS=${BENCH_RUNS:-20}
WARMUP=${BENCH_WARMUP:-3}
GO_COUNT=${BENCH_GO_COUNT:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${BENCH_DIR:-$(mktemp -d /tmp/bench-cloudinit.XXXXXX)}
PY=/usr/bin/python3 # the interpreter cloud-init's package runs under
mkdir -p "$DIR"
cd "$DIR"
log() { printf '== %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { echo "must run as root (it apt-get installs cloud-init)" >&2; exit 1; }

# --- install, remembering what we added so that we can remove it again ---
export DEBIAN_FRONTEND=noninteractive
if ! command -v hyperfine >/dev/null; then
	log "installing hyperfine"
	apt-get update -qq
	apt-get install -y -qq hyperfine >/dev/null
fi
installed() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
installed >"$DIR/pkgs.before"
if ! dpkg-query -W -f='${Status}' cloud-init 2>/dev/null | grep -q 'ok installed'; then
	log "installing cloud-init (removed again on exit unless BENCH_KEEP=1)"
	apt-get update -qq
	apt-get install -y -qq cloud-init >/dev/null
fi
installed >"$DIR/pkgs.after"
ADDED=$(comm -13 "$DIR/pkgs.before" "$DIR/pkgs.after" | tr '\n' ' ')
cleanup() {
	if [ -n "$ADDED" ] && [ "${BENCH_KEEP:-}" != 1 ]; then
		log "purging $ADDED"
		# sudo comes with cloud-init and refuses removal unless forced; it was
		# not there before this script, so nothing relies on it.
		# shellcheck disable=SC2086 # one word per package
		SUDO_FORCE_REMOVE=yes apt-get purge -y -qq $ADDED >/dev/null || true
	fi
}
trap cleanup EXIT
CI_VERSION=$(dpkg-query -W -f='${Version}' cloud-init)

# --- inputs ---
log "building cloudroot and writing the corpus into $DIR"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$DIR/cloudroot-agent" ./cmds/cloudroot-agent)
(cd "$ROOT" && CGO_ENABLED=0 go build -tags cloudroot_front -o "$DIR/cloudroot" ./cmds/cloudroot)
(cd "$ROOT" && CLOUDROOT_BENCH_CORPUS="$DIR/corpus" go test -count=1 -run '^TestWriteBenchCorpus$' ./pkg/userdata/ >/dev/null)
mapfile -t PARTS < <(sed 's#^.*/parts/##' corpus/attach.txt)
ATTACH=()
for p in "${PARTS[@]}"; do ATTACH+=(-a "$p"); done
(cd corpus/parts && cloud-init devel make-mime "${ATTACH[@]}") >ud.mime
gzip -9n <ud.mime >ud.mime.gz
cp "$ROOT/pkg/cli/testdata/query/_trees/nocloud/run/cloud-init/instance-data-sensitive.json" idata.json
printf '#cloud-config\npackages: [vim]\n' >vd.txt
cat >ci_process_merge.py <<'EOF'
"""Process a user-data and merge its cloud-config with cloud-init's library,
the way `cloud-init init` does: UserDataProcessor.process, then handlers.walk
over the parts, text/cloud-config parts handed to CloudConfigPartHandler
(util.load_yaml + mergers); scripts and boothooks are kept in memory
(cloudroot's userdata.Process does not write them either).
Usage: ci_process_merge.py FILE [--iterations N] [--merged-out FILE]"""
import argparse, atexit, json, shutil, statistics, tempfile, time

from cloudinit import handlers, helpers
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
from cloudinit.user_data import UserDataProcessor

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--iterations", type=int, default=1)
ap.add_argument("--merged-out")
a = ap.parse_args()
blob = open(a.file, "rb").read()
tmp = tempfile.mkdtemp(prefix="ci-bench-")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)
paths = helpers.Paths({"cloud_dir": tmp, "run_dir": tmp})
SCRIPTS = {"text/x-shellscript", "text/x-shellscript-per-boot",
           "text/x-shellscript-per-instance", "text/x-shellscript-per-once",
           "text/cloud-boothook"}


def merge(msg):
    cc = CloudConfigPartHandler(paths)
    cc.handle_part(None, handlers.CONTENT_START, None, None, None, None)
    scripts = []

    def cb(_data, filename, payload, headers):
        ctype = headers["Content-Type"]
        if ctype == "text/cloud-config":
            cc.handle_part(None, ctype, filename, payload, None, headers)
        elif ctype in SCRIPTS:
            scripts.append((filename, payload))

    handlers.walk(msg, cb, {})
    return cc.cloud_buf, len(cc.file_names), len(scripts)


def process(blob):
    return UserDataProcessor(paths).process(blob)


buf, nconf, nscripts = merge(process(blob))
if a.merged_out:
    with open(a.merged_out, "w") as f:
        json.dump(buf, f, indent=1, sort_keys=True)
if a.iterations > 1:
    msg = process(blob)
    for name, fn in (("process+merge", lambda: merge(process(blob))),
                     ("process", lambda: process(blob)),
                     ("merge", lambda: merge(msg))):
        ts = []
        for _ in range(a.iterations):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        print("%s\t%.6f\t%d\t%d\t%d" % (name, statistics.median(ts), len(ts), nconf, nscripts))
EOF

# --- both tools must agree before their times mean anything ---
log "checking that both tools compute the same results"
$PY ci_process_merge.py ud.mime --merged-out merged.cloud-init.json
(cd "$ROOT" && CLOUDROOT_BENCH_USERDATA="$DIR/ud.mime" CLOUDROOT_BENCH_MERGED="$DIR/merged.cloudroot.json" \
	go test -count=1 -run '^TestBenchCorpusMerged$' ./pkg/userdata/ >/dev/null)
$PY -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a!=b)' merged.cloud-init.json merged.cloudroot.json ||
	{ echo "merged cloud-config differs (merged.*.json)" >&2; exit 1; }
cloud-init devel render -i idata.json corpus/tmpl.yaml >render.cloud-init.yaml
./cloudroot devel render -i idata.json corpus/tmpl.yaml >render.cloudroot.yaml
cmp render.cloud-init.yaml render.cloudroot.yaml
cloud-init schema --config-file corpus/big.yaml >/dev/null
./cloudroot schema --config-file corpus/big.yaml >/dev/null
for u in ud.mime ud.mime.gz; do
	cloud-init query -i idata.json -u $u -v vd.txt --all >query.cloud-init.json
	./cloudroot query -i idata.json -u $u -v vd.txt --all >query.cloudroot.json
	# cloudroot also prints combined_cloud_config (null here), which 22.4 lacks.
	$PY -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); b.pop("combined_cloud_config", None); sys.exit(a!=b)' \
		query.cloud-init.json query.cloudroot.json || { echo "query output differs for $u" >&2; exit 1; }
done

# --- timings ---
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "hyperfine: $RUNS runs after $WARMUP warm-up runs each (load average $LOAD_START)"
hf() { # name, then the cloud-init and the cloudroot command lines
	local name=$1
	shift
	hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "hf-$name.json" "$@" >&2
}
hf schema "cloud-init schema --config-file corpus/big.yaml" "./cloudroot schema --config-file corpus/big.yaml"
hf make-mime "bash -c 'cd corpus/parts && exec cloud-init devel make-mime ${ATTACH[*]}'" \
	"bash -c 'cd corpus/parts && exec ../../cloudroot devel make-mime ${ATTACH[*]}'"
hf query "cloud-init query -i idata.json -u ud.mime -v vd.txt --all" "./cloudroot query -i idata.json -u ud.mime -v vd.txt --all"
hf query-gz "cloud-init query -i idata.json -u ud.mime.gz -v vd.txt --all" "./cloudroot query -i idata.json -u ud.mime.gz -v vd.txt --all"
hf render "cloud-init devel render -i idata.json corpus/tmpl.yaml" "./cloudroot devel render -i idata.json corpus/tmpl.yaml"
hf python "$PY ci_process_merge.py ud.mime" "$PY ci_process_merge.py ud.mime.gz" "$PY -c 'import cloudinit.user_data, cloudinit.handlers.cloud_config'"

log "cloud-init library in-process, $RUNS iterations"
$PY ci_process_merge.py ud.mime --iterations "$RUNS" >py-mime.tsv
$PY ci_process_merge.py ud.mime.gz --iterations "$RUNS" >py-gz.tsv

log "go test -bench BenchmarkCorpusProcessMerge -count $GO_COUNT on cloud-init's make-mime bytes"
(cd "$ROOT" && CLOUDROOT_BENCH_USERDATA="$DIR/ud.mime" go test -run '^$' -bench '^BenchmarkCorpusProcessMerge$' \
	-benchmem -count "$GO_COUNT" ./pkg/userdata/) >gobench.txt
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ---
$PY - "$CI_VERSION" "$LOAD_START" "$LOAD_END" "$(wc -c <ud.mime)" "$(wc -c <ud.mime.gz)" "$(wc -c <corpus/big.yaml)" <<'EOF'
import json, re, statistics, sys
ver, load0, load1, mime, gz, big = sys.argv[1:]
def hf(name):
    return [r["median"] for r in json.load(open("hf-%s.json" % name))["results"]]
def ms(s):
    return "%.0f ms" % (s * 1e3) if s >= 0.0995 else "%.1f ms" % (s * 1e3)
def py(f):
    return {l.split("\t")[0]: float(l.split("\t")[1]) for l in open(f)}
go = {}
for l in open("gobench.txt"):
    m = re.match(r"BenchmarkCorpusProcessMerge/(\S+?)-\d+\s+\d+\s+([\d.]+) ns/op", l)
    if m:
        go.setdefault(m.group(1), []).append(float(m.group(2)) / 1e9)
go = {k: statistics.median(v) for k, v in go.items()}
pm, pg = py("py-mime.tsv"), py("py-gz.tsv")
print("cloud-init %s; MIME user-data %s bytes (gzip %s), big.yaml %s bytes; load average %s at start, %s at end"
      % (ver, mime, gz, big, load0, load1))
print()
print("| operation (same input bytes) | cloudroot median | cloud-init median | ratio |")
print("|---|---:|---:|---:|")
def row(what, cr, ci):
    print("| %s | %s | %s | %.0f× |" % (what, ms(cr), ms(ci), ci / cr))
for name, what in (("schema", "`schema --config-file big.yaml`"),
                   ("make-mime", "`devel make-mime` of 210 parts"),
                   ("query", "`query -i … -u ud.mime --all`"),
                   ("query-gz", "`query -i … -u ud.mime.gz --all` (gzipped)"),
                   ("render", "`devel render -i … tmpl.yaml`")):
    ci, cr = hf(name)
    row(what + " (CLI, wall)", cr, ci)
row("parse + merge MIME, in-process (Go bench / library)", go["process+merge/mime"], pm["process+merge"])
row("parse + merge gzipped MIME, in-process", go["process+merge/mime-gzip"], pg["process+merge"])
# The two halves split differently (Go parses each part's YAML in Process,
# cloud-init in the cloud-config handler), so no ratio for them.
print("| — parse (Go: Process, MIME + YAML; Python: UserDataProcessor.process, MIME only) | %s | %s | — |" % (ms(go["process/mime"]), ms(pm["process"])))
print("| — merge (Go: MergePart; Python: walk + load_yaml + mergers) | %s | %s | — |" % (ms(go["merge"]), ms(pm["merge"])))
py_whole, py_gz, py_imp = hf("python")
print()
print("cloud-init's library as a whole python3 run (interpreter + imports + parse + merge): %s plain, %s gzipped; "
      "interpreter + imports alone %s." % (ms(py_whole), ms(py_gz), ms(py_imp)))
EOF
log "inputs, outputs and raw results are in $DIR"
