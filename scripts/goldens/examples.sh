#!/usr/bin/env bash
# scripts/goldens/examples.sh — upstream cloud-init's verdict and merged config for
# every cloud-config example it ships, as goldens for cloudroot's
# pkg/cloudcfg/examples_test.go.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/examples.sh
#
# (root: `cloud-init schema` runs inside scripts/upstream-cloudinit.sh's
# unshare -m.) For every doc/examples/cloud-config*.txt and
# doc/module-docs/*/example*.yaml of the checkout it
#   1. copies the example into pkg/cloudcfg/testdata/examples/ (module docs
#      as <module>-<example>.yaml): the corpus is data, refreshed from the
#      source each run, and files no longer upstream are removed;
#   2. runs upstream's `cloud-init schema -c FILE -i INSTANCE_DATA` (the
#      instance data of step 3, for the jinja examples) and records its exit
#      code and its output lines but "Valid schema ...";
#   3. runs the example through upstream's user-data processing as one
#      user-data payload (UserDataProcessor, the handler walk with the
#      CloudConfigPartHandler and its mergers, and the jinja handler
#      rendering with pkg/cloudcfg/testdata/examples-instance-data.json as
#      instance-data-sensitive.json), takes the cloud-config that handler
#      would write to instance/cloud-config.txt, dumps and reloads it as the
#      boot does, and records it as JSON;
# into pkg/cloudcfg/testdata/examples/<name>.upstream.json:
#   {"version": "...", "schema_exit": N, "schema_errors": [...], "config": {...}}
set -euo pipefail

. "$(dirname "$0")/lib/goldenlib.sh"
need_src examples
need_root examples "cloud-init schema runs in scripts/upstream-cloudinit.sh's unshare -m"
src=$CLOUDINIT_SRC
out=$repo/pkg/cloudcfg/testdata/examples
run=$repo/scripts/upstream-cloudinit.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

idata=$repo/pkg/cloudcfg/testdata/examples-instance-data.json

mkdir -p "$out"
rm -f "$out"/*
examples=()
for f in "$src"/doc/examples/cloud-config*.txt; do
	cp "$f" "$out/$(basename "$f")"
	examples+=("$out/$(basename "$f")")
done
for f in "$src"/doc/module-docs/*/example*.yaml; do
	mod=$(basename "$(dirname "$f")")
	cp "$f" "$out/$mod-$(basename "$f")"
	examples+=("$out/$mod-$(basename "$f")")
done

version=$(CLOUDINIT_SRC=$src "$run" --version-of-source)

cat >"$tmp/merge.py" <<'PY'
"""Print {path: config} for each user-data file: upstream's processing.

argv: instance-data.json, then the user-data files."""
import base64
import json
import os
import shutil
import sys
import tempfile

from cloudinit import handlers, helpers, safeyaml, user_data, util
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
from cloudinit.handlers.jinja_template import JinjaTemplatePartHandler
from cloudinit.settings import PER_INSTANCE


def merged(path, tmp):
    paths = helpers.Paths({"cloud_dir": tmp, "run_dir": tmp})
    msg = user_data.UserDataProcessor(paths).process(util.load_binary_file(path))
    h = CloudConfigPartHandler(paths)
    got = {}

    def capture():
        got["buf"] = h.cloud_buf

    h._write_cloud_config = capture
    j = JinjaTemplatePartHandler(paths, sub_handlers=[h])
    c_handlers = helpers.ContentHandlers()
    c_handlers.register(h, overwrite=False)
    c_handlers.register(j, overwrite=False)
    handlers.call_begin(h, None, PER_INSTANCE)
    data = {
        "handlers": c_handlers,
        "handlerdir": None,
        "data": None,
        "frequency": PER_INSTANCE,
        "handlercount": 0,
        "excluded": [],
    }
    handlers.walk(msg, handlers.walker_callback, data)
    handlers.call_end(h, None, PER_INSTANCE)
    buf = got.get("buf")
    if buf is None:
        return {}  # an empty instance/cloud-config.txt, read back as {}
    # What the boot reads back: instance/cloud-config.txt, dumped then loaded.
    return util.load_yaml(safeyaml.dumps(buf))


def jsonable(v):
    """bytes (a !!binary value) as {"!!binary": base64}: JSON has no bytes."""
    if isinstance(v, bytes):
        return {"!!binary": base64.b64encode(v).decode()}
    if isinstance(v, dict):
        return {str(k): jsonable(e) for k, e in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(e) for e in v]
    return v


out = {}
with tempfile.TemporaryDirectory() as tmp:
    shutil.copy(sys.argv[1], os.path.join(tmp, "instance-data-sensitive.json"))
    for path in sys.argv[2:]:
        out[path] = jsonable(merged(path, tmp))
json.dump(out, sys.stdout, sort_keys=True, default=str)
PY

CLOUDINIT_SRC=$src "$run" --python "$tmp/merge.py" "$idata" "${examples[@]}" >"$tmp/merged.json"

for f in "${examples[@]}"; do
	name=$(basename "$f")
	set +e
	CLOUDINIT_SRC=$src "$run" schema -c "$f" -i "$idata" >"$tmp/schema.out" 2>&1
	code=$?
	set -e
	python3 - "$f" "$code" "$version" "$tmp/schema.out" "$tmp/merged.json" "$out/$name.upstream.json" <<'PY'
import json
import sys

path, code, version, schema_out, merged, dest = sys.argv[1:]
code = int(code)
lines = open(schema_out).read().splitlines()
# Error lines, with the checkout's path made the corpus-relative name.
errors = [l.replace(path, "FILE") for l in lines if l.strip() and not l.startswith("Valid schema")]
rec = {"version": version, "schema_exit": code, "schema_errors": errors}
if code == 0:
    rec["config"] = json.load(open(merged))[path]
with open(dest, "w") as f:
    json.dump(rec, f, indent=1, sort_keys=True)
    f.write("\n")
PY
	echo "$name: schema exit $code"
done
