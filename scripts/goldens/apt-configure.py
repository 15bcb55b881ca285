"""Run upstream cc_apt_configure on every pkg/modules/pkgmgr/testdata/apt case.

Run through scripts/upstream-cloudinit.sh --python (see docs/compatibility.md):

    scripts/goldens/apt-configure.py <cases dir> <templates dir> <cloudcfg dir>

For each <case>/user-data.yaml and each release (the families of
pkg/modules/pkgmgr/apt_configure_test.go) it builds the same temporary target,
runs upstream's handle() with every command answered by a recorder (the
same answers as the Go test's fake runner) and every path redirected into
the target, and writes <case>/upstream.<release>.txt: the commands, then
the files under etc/apt, etc/cloud, var/lib/apt and tmp. Upstream uses
cloudroot's sources templates (templates/apt) and the system_info of its
own rendered cloud.cfg (pkg/distro/testdata/cloudcfg). Nothing leaves the
machine: gpg, apt-get and add-apt-repository are never executed.
"""

import glob
import json
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import cloud as cloudmod
from cloudinit import distros, helpers, subp, util
from cloudinit.config import cc_apt_configure as cc
from cloudinit.distros.package_management import apt as apt_pm
from cloudinit.sources.DataSourceNone import DataSourceNone

FAMILIES = [
    ("debian12", "debian", "bookworm", 'ID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n'),
    ("debian13", "debian", "trixie", 'ID=debian\nVERSION_ID="13"\nVERSION_CODENAME=trixie\n'),
    ("ubuntu2204", "ubuntu", "jammy",
     'ID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\nVERSION_CODENAME=jammy\nUBUNTU_CODENAME=jammy\n'),
    ("ubuntu2404", "ubuntu", "noble",
     'ID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\nUBUNTU_CODENAME=noble\n'),
]
DEB822 = {"debian12": False, "debian13": True, "ubuntu2204": False, "ubuntu2404": True}
BASE = {
    "usr/bin/apt-get": "",
    "usr/bin/gpg": "",
    "usr/bin/gpgconf": "",
    "etc/apt/sources.list": "deb http://old.example/debian old main\n",
    "etc/cloud/cloud.cfg.d/90_dpkg.cfg": "datasource_list: [NoCloud]\n",
    "var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_x_Release": "cached\n",
}
GPG_HOME = "/tmp/cloudroot-apt-gpg"
# Names the fake resolver knows (the Go test's fakeLookup has the same);
# no DNS query ever leaves the machine.
RESOLVABLE = {"mirror.resolvable.test", "ubuntu-security-mirror.example.test", "debian-security-mirror.example.test"}


def fake_is_resolvable(url):
    from urllib.parse import urlparse

    return urlparse(url).hostname in RESOLVABLE


class Run:
    def __init__(self, root, tmpl_dir):
        self.root = root
        self.tmpl_dir = tmpl_dir
        self.log = []

    def r(self, p):
        if not isinstance(p, str) or not p.startswith("/"):
            return p
        if p.startswith(self.root) or p.startswith(self.tmpl_dir):
            return p
        return self.root + p

    def subp(self, args, data=None, update_env=None, decode="replace", **kw):
        args = [str(a) for a in args]
        line = "$ " + " ".join(args)
        env = update_env or {}
        if "GNUPGHOME" in env:
            line += " [GNUPGHOME=%s]" % GPG_HOME
        if "DEBIAN_FRONTEND" in env:
            line += " [DEBIAN_FRONTEND=%s]" % env["DEBIAN_FRONTEND"]
        if data is not None:
            text = data.decode() if isinstance(data, bytes) else data
            line += " <<< " + json.dumps(text)
        self.log.append(line)
        joined = " ".join(args)
        out = ""
        if joined == "dpkg --print-architecture":
            out = "amd64\n"
        elif joined == "gpg --dearmor":
            text = data.decode() if isinstance(data, bytes) else data
            out = "DEARMORED(%s)" % text.strip()
        elif joined == "dpkg-query --list":
            out = ("Desired=Unknown/Install/Remove/Purge/Hold\n||/ Name Version Architecture Description\n"
                   "+++-====\nii  cloud-init 26.1 all init\nii  the-package 1 all x\nrc  gone 1 all removed\n")
        elif len(args) == 4 and args[1] == "--export":
            if any(("--recv-keys " + args[3]) in x for x in self.log):
                out = "ARMOURED(%s)" % args[3]
        if decode is False:
            out = out.encode()
        return subp.SubpResult(out, "" if decode else b"")

    def arch(self):
        # util.get_dpkg_architecture is cached: one dpkg call per run.
        if not hasattr(self, "_arch"):
            self._arch = self.subp(["dpkg", "--print-architecture"]).stdout.strip()
        return self._arch

    def which(self, program, search=None, target=None):
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            p = os.path.join(self.root + d, program)
            if os.path.isfile(p):
                return os.path.join(d, program)
        return None


class OSShim:
    def __init__(self, run):
        self._run = run
        outer = self

        class PathShim:
            def __getattr__(self, name):
                return getattr(os.path, name)

            def isfile(self, p):
                return os.path.isfile(outer._run.r(p))

            def exists(self, p):
                return os.path.exists(outer._run.r(p))

        self.path = PathShim()

    def __getattr__(self, name):
        return getattr(os, name)

    def rename(self, a, b):
        return os.rename(self._run.r(a), self._run.r(b))

    def unlink(self, p):
        return os.unlink(self._run.r(p))


def dump(root):
    out = []
    for top in ("etc/apt", "etc/cloud", "var/lib/apt", "tmp"):
        base = os.path.join(root, top)
        files = []
        for d, _dirs, names in os.walk(base):
            for n in names:
                files.append(os.path.join(d, n))
        for f in sorted(files):
            with open(f, "rb") as fh:
                body = fh.read().decode()
            mode = os.stat(f).st_mode & 0o7777
            out.append("--- /%s (%04o)\n%s" % (os.path.relpath(f, root), mode, body))
            if body and not body.endswith("\n"):
                out.append("\n[no newline at end]\n")
    return "".join(out)


def run_case(ud_path, fam, tmpl_dir, cloudcfg_dir):
    name, dname, codename, osr = fam
    root = tempfile.mkdtemp(prefix="apt-golden-")
    try:
        files = dict(BASE)
        files["etc/os-release"] = osr
        for p, s in files.items():
            hp = os.path.join(root, p)
            os.makedirs(os.path.dirname(hp), exist_ok=True)
            with open(hp, "w") as fh:
                fh.write(s)
        run = Run(root, tmpl_dir)
        orig_write, orig_del, orig_load = util.write_file, util.del_file, util.load_text_file
        orig_glob = glob.glob
        patches = [
            (subp, "subp", run.subp),
            (subp, "which", run.which),
            (subp, "target_path", lambda target=None, path=None: run.r(path if path is not None else target)),
            (util, "write_file", lambda fn, *a, **k: orig_write(run.r(fn), *a, **k)),
            (util, "del_file", lambda fn: orig_del(run.r(fn))),
            (util, "load_text_file", lambda fn, *a, **k: orig_load(run.r(fn), *a, **k)),
            (util, "lsb_release", lambda: {"codename": codename}),
            (util, "get_dpkg_architecture", run.arch),
            (util, "system_is_snappy", lambda: False),
            (util, "is_resolvable", fake_is_resolvable),
            (util, "is_resolvable_url", fake_is_resolvable),
            (cc, "os", OSShim(run)),
            (cc.glob, "glob", lambda pat, *a, **k: orig_glob(run.r(pat), *a, **k)),
            (apt_pm.Apt, "_apt_lock_available", lambda self: True),
            (cc.features, "APT_DEB822_SOURCE_LIST_FILE", DEB822[name]),
        ]
        saved = [(o, a, getattr(o, a)) for o, a, _ in patches]
        for o, a, v in patches:
            setattr(o, a, v)
        try:
            with open(os.path.join(cloudcfg_dir, dname + ".cfg")) as fh:
                sys_cfg = yaml.safe_load(fh)["system_info"]
            paths = helpers.Paths({"cloud_dir": root + "/var/lib/cloud", "templates_dir": tmpl_dir,
                                   "run_dir": root + "/run/cloud-init"})
            distro = distros.fetch(dname)(dname, sys_cfg, paths)
            ds = DataSourceNone(sys_cfg, distro, paths)
            ds.metadata = {"local-hostname": "host.example.test"}
            c = cloudmod.Cloud(ds, paths, {}, distro, helpers.Runners(paths))
            with open(ud_path) as fh:
                cfg = yaml.safe_load(fh) or {}
            try:
                cc.handle("apt_configure", cfg, c, [])
            except Exception as e:  # recorded as the Go test records errors
                run.log.append("error: %s" % e)
        finally:
            for o, a, v in saved:
                setattr(o, a, v)
        return "\n".join(run.log) + ("\n" if run.log else "") + dump(root)
    finally:
        shutil.rmtree(root)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/pkgmgr/testdata/apt", "templates/apt", "pkg/distro/testdata/cloudcfg"])


def main():
    cases_dir, tmpl_dir, cloudcfg_dir = (os.path.abspath(a) for a in sys.argv[1:4])
    for ud in sorted(glob.glob(os.path.join(cases_dir, "*", "user-data.yaml"))):
        for fam in FAMILIES:
            out = run_case(ud, fam, tmpl_dir, cloudcfg_dir)
            with open(os.path.join(os.path.dirname(ud), "upstream.%s.txt" % fam[0]), "w") as fh:
                fh.write(out)


if __name__ == "__main__":
    main()
