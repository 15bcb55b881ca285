"""Run upstream cloud-init's cc_ca_certs.handle on each case of
pkg/modules/testdata/modgolden/ca_certs and record what it did, for
pkg/modules' TestCACertsUpstream.

  scripts/goldens/ca-certs.py pkg/modules/testdata/modgolden/ca_certs pkg/modules/testdata/modgolden/os \
      > pkg/modules/testdata/ca-certs-upstream.json

Nothing is run or changed on this machine: files are read from and written
into a temporary copy of the case's root/ tree, directory emptying is
confined to it, and subp records commands (with their input). Output per
case: the files written (path -> content), the directories emptied, the
commands, or the error.
"""
import json
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import util
from cloudinit.config import cc_ca_certs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/modgolden/ca_certs", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/testdata/ca-certs-upstream.json")

CASES, OSDIR = sys.argv[1:3]


real_write, real_exists, real_stat, real_load = util.write_file, os.path.exists, os.stat, util.load_text_file
result = {}
for case, cdir, _, name, cfg, _ in goldenlib.cases(CASES, OSDIR):
    tmp = tempfile.mkdtemp()
    if os.path.isdir(os.path.join(cdir, "root")):
        shutil.copytree(os.path.join(cdir, "root"), tmp, dirs_exist_ok=True)
    inroot = lambda p: os.path.join(tmp, str(p).lstrip("/"))
    rec = {"files": {}, "emptied": [], "commands": []}

    def write_file(path, content="", *a, **kw):
        rec["files"][str(path)] = content if isinstance(content, str) else content.decode()

    def fake_subp(args, *a, **kw):
        data = kw.get("data")
        rec["commands"].append([str(x) for x in args] + (["<stdin %d bytes>" % len(data)] if data else []))

    util.write_file = write_file
    util.delete_dir_contents = lambda d: rec["emptied"].append(d)
    # (not real_exists: it calls os.stat, patched below)
    cc_ca_certs.os.path.exists = lambda p: os.access(inroot(p), os.F_OK)
    cc_ca_certs.os.stat = lambda p: real_stat(inroot(p))
    util.load_text_file = lambda p, *a, **kw: real_load(inroot(p))
    cc_ca_certs.subp.subp = fake_subp

    class Distro:
        pass

    Distro.name = name

    class Cloud:
        distro = Distro()

    try:
        cc_ca_certs.handle("ca_certs", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    util.write_file, util.load_text_file = real_write, real_load
    cc_ca_certs.os.path.exists, cc_ca_certs.os.stat = real_exists, real_stat
    shutil.rmtree(tmp)
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
