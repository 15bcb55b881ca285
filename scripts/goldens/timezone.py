"""Run upstream cloud-init's cc_timezone.handle, with the distro class of
each case, on every case of pkg/modules/ntp/testdata/modgolden/timezone and
record what it did, for pkg/modules' TestTimezoneUpstream.

  scripts/goldens/timezone.py pkg/modules/ntp/testdata/modgolden/timezone pkg/modules/testdata/modgolden/os \
      > pkg/modules/ntp/testdata/timezone-upstream.json

Nothing is changed on this machine: the zoneinfo files and /etc/localtime
are looked up in the case's root/ tree, writes, links, copies and deletes
are recorded. Output per case: the operations in order, or the error.
"""
import json
import os
import sys

from cloudinit import distros, helpers, util
from cloudinit.config import cc_timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/ntp/testdata/modgolden/timezone", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/ntp/testdata/timezone-upstream.json")

CASES, OSDIR = sys.argv[1:3]
real = (util.write_file, util.del_file, util.sym_link, util.copy, os.symlink, os.path.islink, os.path.exists,
        os.path.isfile, util.system_info, util.load_text_file)
result = {}
for case, cdir, osr, name, cfg, systemd in goldenlib.cases(CASES, OSDIR):
    root = os.path.join(cdir, "root")
    inroot = lambda p: os.path.join(root, str(p).lstrip("/"))
    ops = []
    rec = {"ops": ops}
    util.write_file = lambda path, content="", *a, **kw: ops.append(["write", str(path), content])
    util.del_file = lambda p, *a, **kw: ops.append(["delete", str(p)])
    util.sym_link = lambda s, l, *a, **kw: ops.append(["symlink", str(s), str(l)])
    os.symlink = lambda s, l, *a, **kw: ops.append(["symlink", str(s), str(l)])
    util.copy = lambda s, d, *a, **kw: ops.append(["copy", str(s), str(d)])
    os.path.islink = lambda p: real[5](inroot(p))
    os.path.exists = lambda p: os.access(inroot(p), os.F_OK) or real[5](inroot(p))
    os.path.isfile = lambda p: real[7](inroot(p))
    util.load_text_file = lambda p, *a, **kw: real[9](inroot(p))
    util.system_info = lambda: {"dist": (osr["ID"], osr.get("VERSION_ID", ""), ""), "variant": osr["ID"], "system": "Linux"}
    d = distros.fetch(name)(name, {}, helpers.Paths({}))
    d.uses_systemd = lambda: systemd

    class Cloud:
        distro = d

    try:
        cc_timezone.handle("timezone", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    (util.write_file, util.del_file, util.sym_link, util.copy, os.symlink, os.path.islink, os.path.exists,
     os.path.isfile, util.system_info, util.load_text_file) = real
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
