"""Run upstream cloud-init's cc_keyboard.handle, with the distro class of
each case, on every case of pkg/modules/testdata/modgolden/keyboard and
record what it did, for pkg/modules' TestKeyboardUpstream.

  scripts/goldens/keyboard.py pkg/modules/testdata/modgolden/keyboard pkg/modules/testdata/modgolden/os \
      > pkg/modules/testdata/keyboard-upstream.json

Nothing is run or changed on this machine: keymap files are looked up in
the case's root/ tree; writes, commands and service calls are recorded.
"""
import json
import os
import sys

from cloudinit import distros, helpers, subp, util
from cloudinit.config import cc_keyboard

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/modgolden/keyboard", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/testdata/keyboard-upstream.json")

CASES, OSDIR = sys.argv[1:3]
real = (util.write_file, subp.subp, os.path.isdir, os.path.isfile, util.system_info)
result = {}
for case, cdir, osr, name, cfg, systemd in goldenlib.cases(CASES, OSDIR):
    root = os.path.join(cdir, "root")
    inroot = lambda p: os.path.join(root, str(p).lstrip("/"))
    rec = {"files": {}, "commands": []}
    util.write_file = lambda path=None, content="", *a, filename=None, **kw: rec["files"].__setitem__(str(path or filename), content)
    subp.subp = lambda args, *a, **kw: rec["commands"].append([str(x) for x in args]) or subp.SubpResult("", "")
    os.path.isdir = lambda p: real[2](inroot(p))
    os.path.isfile = lambda p: real[3](inroot(p))
    util.system_info = lambda: {"dist": (osr["ID"], osr.get("VERSION_ID", ""), ""), "variant": osr["ID"], "system": "Linux"}
    d = distros.fetch(name)(name, {}, helpers.Paths({}))
    d.uses_systemd = lambda: systemd
    d.manage_service = lambda action, svc, *extra, **kw: rec["commands"].append(["service", action, svc] + list(extra))

    class Cloud:
        distro = d

    try:
        cc_keyboard.handle("keyboard", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    (util.write_file, subp.subp, os.path.isdir, os.path.isfile, util.system_info) = real
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
