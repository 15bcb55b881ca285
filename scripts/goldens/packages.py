"""Run upstream cc_package_update_upgrade_install on pkg/modules/pkgmgr test cases.

Run through scripts/upstream-cloudinit.sh --python (see docs/compatibility.md):

    scripts/goldens/packages.py <cases dir> <cloudcfg dir>

For each <case>/user-data.yaml and each family of
pkg/modules/pkgmgr/packages_test.go, upstream's handle() runs with the family's
distro class (system_info from its rendered cloud.cfg, merged with the
case's), every command recorded instead of run, `which` answering what the
family's image has, and its semaphores in a temporary directory. It writes
<case>/upstream.<family>.txt: one line per command, the environment it
adds and the argv, as the Go test renders them.
"""

import glob
import json
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import distros, helpers, subp, util
from cloudinit.config import cc_package_update_upgrade_install as cc

FAMILIES = {
    "debian": ("debian", "debian", {"apt-get"}),
    "ubuntu": ("ubuntu", "ubuntu", {"apt-get", "snap"}),
    "rocky": ("rocky", "rocky", {"dnf"}),
    "centos7": ("centos", "centos", {"yum"}),
    "opensuse": ("opensuse-leap", "suse", {"zypper"}),
    "alpine": ("alpine", "alpine", {"apk"}),
    "arch": ("arch", "arch", {"pacman"}),
}


class DS:
    def get_instance_id(self):
        return "iid-test"


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/pkgmgr/testdata/packages", "pkg/distro/testdata/cloudcfg"])


def main():
    cases_dir, cloudcfg_dir = sys.argv[1], sys.argv[2]
    for ud in sorted(glob.glob(os.path.join(cases_dir, "*", "user-data.yaml"))):
        with open(ud) as fh:
            user = yaml.safe_load(fh) or {}
        for fam, (dname, cfgname, tools) in FAMILIES.items():
            log = []

            def fake_subp(args, update_env=None, **kw):
                env = update_env or {}
                pre = "".join("%s=%s " % (k, v) for k, v in sorted(env.items()))
                log.append(pre + "[" + " ".join(json.dumps(str(a)) for a in args) + "]")
                out = ""
                if list(args) == ["snap", "get", "system", "-d"]:
                    out = '{"refresh": {"timer": "00:00~24:00/4"}}'
                elif list(args[:2]) == ["apt-cache", "pkgnames"]:
                    out = "\n".join(["pwgen", "pastebinit", "libpython3.8", "mg", "curl", "git", "jq", "nginx",
                                     "htop", "tmux"]) + "\n"
                return subp.SubpResult(out, "")

            saved = (subp.subp, subp.which, cc.os.path.isfile)
            subp.subp = fake_subp
            subp.which = lambda prog, **kw: ("/usr/bin/" + prog) if prog in tools else None
            cc.os.path.isfile = lambda p: False
            tmp = tempfile.mkdtemp(prefix="pkg-golden-")
            try:
                with open(os.path.join(cloudcfg_dir, cfgname + ".cfg")) as fh:
                    sys_cfg = yaml.safe_load(fh)["system_info"]
                sys_cfg = util.mergemanydict([user.get("system_info", {}), sys_cfg])
                paths = helpers.Paths({"cloud_dir": tmp})
                paths.datasource = DS()
                distro = distros.fetch(sys_cfg.get("distro", dname))(dname, sys_cfg, paths)
                distro._runner = helpers.Runners(paths)
                for m in distro.package_managers:
                    m.runner = distro._runner

                class Cloud:
                    pass

                c = Cloud()
                c.distro = distro
                try:
                    cc.handle("package_update_upgrade_install", dict(user), c, [])
                except Exception as e:
                    log.append("error: %s" % e)
            finally:
                subp.subp, subp.which, cc.os.path.isfile = saved
                shutil.rmtree(tmp)
            with open(os.path.join(os.path.dirname(ud), "upstream.%s.txt" % fam), "w") as fh:
                fh.write("".join(l + "\n" for l in log))


if __name__ == "__main__":
    main()
