"""Run upstream cloud-init's cc_rsyslog.handle on each case of
pkg/modules/testdata/modgolden/rsyslog and record what it did, for
pkg/modules' TestRsyslogUpstream.

  scripts/goldens/rsyslog.py pkg/modules/testdata/modgolden/rsyslog pkg/modules/testdata/modgolden/os \
      > pkg/modules/testdata/rsyslog-upstream.json

Nothing is run or changed on this machine: files are written into a
temporary directory (absolute paths kept in the output), `which` answers
from the case's root/ tree, and the distro's install_packages and
manage_service and subp are recorders. Output per case: the files, the
installed packages, the reload (service action or command), or the error.
"""
import json
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import distros, helpers, util
from cloudinit.config import cc_rsyslog

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/modgolden/rsyslog", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/testdata/rsyslog-upstream.json")

CASES, OSDIR = sys.argv[1:3]


real_write = util.write_file
result = {}
for case, cdir, _, name, cfg, _ in goldenlib.cases(CASES, OSDIR):
    tmp = tempfile.mkdtemp()
    if os.path.isdir(os.path.join(cdir, "root")):
        shutil.copytree(os.path.join(cdir, "root"), tmp, dirs_exist_ok=True)
    rec = {"files": {}, "installed": [], "reload": []}

    def write_file(path, content="", *a, omode="wb", **kw):
        content = content if isinstance(content, str) else content.decode()
        path = str(path)
        if omode.startswith("a"):
            rec["files"][path] = rec["files"].get(path, "") + content
        else:
            rec["files"][path] = content

    def which(exe, *a, **kw):
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            p = os.path.join(tmp, d.lstrip("/"), exe)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        return None

    util.write_file = write_file
    cc_rsyslog.subp.which = which
    cc_rsyslog.subp.subp = lambda cmd, *a, **kw: rec["reload"].append(["command"] + list(cmd)) or ("", "")
    d = distros.fetch(name)(name, {}, helpers.Paths({}))
    d.install_packages = lambda pkgs: rec["installed"].extend(pkgs)
    d.manage_service = lambda action, svc, *extra, **kw: rec["reload"].append([action, svc] + list(extra)) or ("", "")
    cc_rsyslog.loggers.reset_logging = lambda: None
    cc_rsyslog.loggers.setup_logging = lambda *a, **kw: None

    class Cloud:
        distro = d
        cfg = {}

    try:
        cc_rsyslog.handle("rsyslog", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = str(e)
    util.write_file = real_write
    shutil.rmtree(tmp)
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
