"""Run upstream cloud-init's cc_locale.handle, with the distro class of
each case, on every case of pkg/modules/testdata/modgolden/locale and record
what it did, for pkg/modules' TestLocaleUpstream.

  scripts/goldens/cc-locale.py pkg/modules/testdata/modgolden/locale pkg/modules/testdata/modgolden/os \
      > pkg/modules/testdata/locale-upstream.json

Nothing is run or changed on this machine: reads come from the case's
root/ tree, writes and commands are recorded (`which` answers from the
tree), and util.system_info() reports the case's os-release. Output per
case: the files written (path -> content, cloud-init's dated header line
dropped), the commands with their added environment, the packages
installed, or the error.
"""
import json
import os
import sys

from cloudinit import distros, helpers, subp, util

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/modgolden/locale", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/testdata/locale-upstream.json")

CASES, OSDIR = sys.argv[1:3]
real = (util.load_text_file, util.write_file, os.path.exists, subp.subp, subp.which, util.system_info)
from cloudinit.config import cc_locale  # noqa: E402

result = {}
for case, cdir, osr, name, cfg, systemd in goldenlib.cases(CASES, OSDIR):
    root = os.path.join(cdir, "root")
    inroot = lambda p: os.path.join(root, str(p).lstrip("/"))
    rec = {"files": {}, "commands": [], "installed": []}

    def load(p, *a, **kw):
        return real[0](inroot(p))

    def write(path, content="", *a, **kw):
        content = content if isinstance(content, str) else content.decode()
        rec["files"][str(path)] = "".join(
            line for line in content.splitlines(True) if not line.startswith("# Created by cloud-init")
        )

    def fake_subp(args, *a, update_env=None, **kw):
        env = ["%s=%s" % kv for kv in sorted((update_env or {}).items())]
        rec["commands"].append(" ".join(env + [str(x) for x in args]))
        return subp.SubpResult("", "")

    def which(exe, *a, **kw):
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            p = inroot(os.path.join(d, exe))
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        return None

    util.load_text_file = load
    util.write_file = write
    util.ensure_dir = lambda *a, **kw: None
    os.path.exists = lambda p: os.access(inroot(p), os.F_OK)
    subp.subp = fake_subp
    subp.which = which
    util.system_info = lambda: {"dist": (osr["ID"], osr.get("VERSION_ID", ""), ""), "variant": osr["ID"], "system": "Linux"}
    d = distros.fetch(name)(name, {}, helpers.Paths({}))
    d.uses_systemd = lambda: systemd
    d.install_packages = lambda pkgs: rec["installed"].extend(pkgs)

    class DS:
        def get_locale(self):
            try:
                return d.get_locale()
            except NotImplementedError:
                return "en_US.UTF-8"

    class Cloud:
        distro = d
        datasource = DS()

        def get_locale(self):
            return self.datasource.get_locale()

    try:
        cc_locale.handle("locale", cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    (util.load_text_file, util.write_file, os.path.exists, subp.subp, subp.which, util.system_info) = real
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
