"""Run upstream cloud-init's cc_ntp.handle on each case of
pkg/modules/ntp/testdata/modgolden/ntp and record what it decided, for
pkg/modules' TestNTPUpstream.

  scripts/goldens/ntp.py CLOUDINIT_SRC pkg/modules/ntp/testdata/modgolden/ntp \
      pkg/modules/testdata/modgolden/os > pkg/modules/ntp/testdata/ntp-upstream.json

Nothing is run or changed on this machine: `which` answers from the case's
root/ tree, files are written into a temporary root, the templates are
upstream's own (or the case's /etc/cloud/templates), and the distro's
install_packages and manage_service are recorders. Output per case: the
files written (path → content), renames, installed packages, service calls,
or the error's message.
"""
import json
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import distros, helpers, subp, util
from cloudinit.config import cc_ntp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults([os.environ["CLOUDINIT_SRC"], "pkg/modules/ntp/testdata/modgolden/ntp", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/ntp/testdata/ntp-upstream.json")

SRC, CASES, OSDIR = sys.argv[1:4]
CLASS = {"debian": "debian", "ubuntu": "ubuntu", "rhel": "rhel", "fedora": "fedora", "opensuse-leap": "suse",
         "sles": "suse", "alpine": "alpine", "arch": "arch", "photon": "photon"}


def os_release(name):
    kv = {}
    with open(os.path.join(OSDIR, name)) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                kv[k] = v.strip('"')
    return kv


result = {}
real_write, real_exists, real_rename, real_info = util.write_file, os.path.exists, util.rename, util.system_info
for case in sorted(os.listdir(CASES)):
    cdir = os.path.join(CASES, case)
    if not os.path.isdir(cdir):
        continue
    with open(os.path.join(cdir, "distro")) as f:
        osr = os_release(f.read().strip())
    name = CLASS[osr["ID"]]
    with open(os.path.join(cdir, "config.yaml")) as f:
        cfg = yaml.safe_load(f) or {}
    tmp = tempfile.mkdtemp()
    if os.path.isdir(os.path.join(cdir, "root")):
        shutil.copytree(os.path.join(cdir, "root"), tmp, dirs_exist_ok=True, symlinks=True)
    inroot = lambda p: os.path.join(tmp, str(p).lstrip("/"))
    rec = {"files": {}, "renamed": [], "installed": [], "services": []}

    def which(exe, *a, **kw):
        for d in ("", "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            p = exe if exe.startswith("/") else os.path.join(d, exe)
            if d == "" and not exe.startswith("/"):
                continue
            if os.path.isfile(inroot(p)) and os.access(inroot(p), os.X_OK):
                return p
        return None

    def write_file(path, content="", *a, **kw):
        path = str(path)
        if path.startswith(tmp) or path.startswith("/tmp") or path.startswith("/run/cloud-init/tmp"):
            return real_write(path, content, *a, **kw)
        rec["files"][path] = content if isinstance(content, str) else content.decode()

    cc_ntp.subp.which = which
    util.system_info = lambda: {"dist": (osr["ID"], osr.get("VERSION_ID", ""), ""), "variant": osr["ID"], "system": "Linux"}
    util.write_file = write_file
    cc_ntp.os.path.exists = lambda p: real_exists(inroot(p)) if str(p).startswith("/etc") else real_exists(p)
    util.rename = lambda a, b: rec["renamed"].append([a, b])
    d = distros.fetch(name)(name, {}, helpers.Paths({"templates_dir": os.path.join(SRC, "templates")}))
    d.install_packages = lambda pkgs: rec["installed"].extend(pkgs)
    d.manage_service = lambda action, svc, *extra, **kw: rec["services"].append([action, svc] + list(extra))
    tdir = os.path.join(cdir, "root/etc/cloud/templates")
    paths = helpers.Paths({"templates_dir": tdir if os.path.isdir(tdir) else os.path.join(SRC, "templates")})

    class Cloud:
        distro = d

        def get_template_filename(self, n):
            fn = paths.template_tpl % n
            return fn if os.path.isfile(fn) else None

    try:
        cc_ntp.handle("ntp", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = str(e)
    util.write_file, os.path.exists, util.rename, util.system_info = real_write, real_exists, real_rename, real_info
    cc_ntp.os.path.exists = real_exists
    shutil.rmtree(tmp)
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
