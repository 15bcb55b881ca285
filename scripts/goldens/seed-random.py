"""Run upstream cloud-init's cc_seed_random.handle on each case of
pkg/modules/testdata/modgolden/seed_random and record what it did, for
pkg/modules' TestSeedRandomUpstream.

  scripts/goldens/seed-random.py pkg/modules/testdata/modgolden/seed_random \
      > pkg/modules/testdata/seed-random-upstream.json

Nothing is run or changed on this machine: append_file is a recorder,
`which` answers from the case's root/ tree and subp records commands with
their added environment. Output per case: the bytes appended per file, the
commands, or the error.
"""
import json
import os
import sys

import yaml

from cloudinit import util
from cloudinit.config import cc_seed_random

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/modgolden/seed_random"], out="pkg/modules/testdata/seed-random-upstream.json")

CASES = sys.argv[1]
result = {}
for case in sorted(os.listdir(CASES)):
    cdir = os.path.join(CASES, case)
    if not os.path.isdir(cdir):
        continue
    with open(os.path.join(cdir, "config.yaml")) as f:
        cfg = yaml.safe_load(f) or {}
    rec = {"appended": {}, "commands": []}

    def append_file(path, content):
        content = content if isinstance(content, str) else content.decode("latin-1")
        rec["appended"][str(path)] = rec["appended"].get(str(path), "") + content

    def which(exe, *a, **kw):
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            p = os.path.join(cdir, "root", d.lstrip("/"), exe)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        return None

    def subp(cmd, *a, update_env=None, **kw):
        env = ["%s=%s" % kv for kv in sorted((update_env or {}).items())]
        rec["commands"].append(env + list(cmd))

    util.append_file = append_file
    cc_seed_random.subp.which = which
    cc_seed_random.subp.subp = subp

    class DS:
        metadata = {"instance-id": "iid-test"}

    class Cloud:
        datasource = DS()

    try:
        cc_seed_random.handle("seed_random", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = str(e)
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
