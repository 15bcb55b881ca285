"""Run upstream cloud-init's configuration-management modules (cc_ansible,
cc_puppet, cc_chef, cc_salt_minion, cc_mcollective) on each case of
pkg/modules/cm/testdata/modgolden/<module> and record what they did, for
pkg/modules/cm's TestCMUpstream.

  scripts/goldens/cm.py MODULE pkg/modules/cm/testdata/modgolden/MODULE \
      pkg/modules/testdata/modgolden/os > pkg/modules/cm/testdata/MODULE-upstream.json

Nothing is run or changed on this machine. The module sees a temporary
root holding the case's root/ tree: its `os`, `os.path`, `shutil` and the
path-taking `util` functions it calls are redirected into that root, and
`subp.which`/`is_exe` answer from it; templates render into it. subp.subp records each command (argv,
the extra environment, the working directory) and answers with the case's
outputs.yaml (stdout by argv joined with spaces); a command listed in the
case's `fail` file fails. The distro's install_packages and manage_service
are recorders (a `fail` line ending in "install PKG" or "ACTION SERVICE"
makes them fail). Downloads (readurl) answer "#!/bin/sh\n" and are
recorded. socket.getfqdn answers from the case's /etc/hostname and
/etc/hosts. Output per case: the events in order, every file and directory
in the root afterwards (mode, content; directories "dir"), chown calls, and
the error message.
"""

import builtins
import json
import os
import re
import shutil
import sys
import tempfile
import types

import yaml

from cloudinit import distros, helpers, subp, util  # noqa: E402
from cloudinit.distros import PackageInstallerError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

# The modules of this area; without arguments each one's cases go to its own golden.
CM_MODULES = ["ansible", "puppet", "chef", "salt_minion", "mcollective"]
if goldenlib.run_each([((m, "pkg/modules/cm/testdata/modgolden/" + m, "pkg/modules/testdata/modgolden/os"), "pkg/modules/cm/testdata/" + m + "-upstream.json") for m in CM_MODULES]):
    sys.exit(0)

MODULE, CASES, OSDIR = sys.argv[1:4]
goldenlib.fix_time(util)
cc = __import__("cloudinit.config.cc_" + MODULE, fromlist=["handle"])
SRC_TEMPLATES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(util.__file__))), "templates")

real = types.SimpleNamespace(os=os, util=util, shutil=shutil)
TMPRE = re.compile(r"/tmp/[^/ ]+/")


class Redirect:
    """A namespace whose path-taking functions act inside root."""

    def __init__(self, base, root, names):
        self._base, self._root, self._names = base, root, names

    def _p(self, p):
        p = os.fspath(p)
        if p.startswith(self._root) or p.startswith("/tmp/") or not p.startswith("/"):
            return p
        return os.path.join(self._root, p.lstrip("/"))

    def __getattr__(self, name):
        f = getattr(self._base, name)
        if name not in self._names:
            return f
        n = self._names[name]

        def wrapped(*a, **kw):
            a = list(a)
            for i in range(min(n, len(a))):
                a[i] = self._p(a[i])
            return f(*a, **kw)
        return wrapped


def run_case(cdir, osr, dname, cfg):
    tmp = tempfile.mkdtemp()
    if os.path.isdir(os.path.join(cdir, "root")):
        shutil.copytree(os.path.join(cdir, "root"), tmp, dirs_exist_ok=True, symlinks=True)
    outputs = {}
    if os.path.exists(os.path.join(cdir, "outputs.yaml")):
        with open(os.path.join(cdir, "outputs.yaml")) as f:
            outputs = yaml.safe_load(f) or {}
    fail = []
    if os.path.exists(os.path.join(cdir, "fail")):
        with open(os.path.join(cdir, "fail")) as f:
            fail = [line.strip() for line in f if line.strip()]
    rec = {"events": [], "chown": []}
    inroot = lambda p: os.path.join(tmp, str(p).lstrip("/"))

    def fake_subp(args, *a, update_env=None, cwd=None, **kw):
        argv = [TMPRE.sub("<tmp>/", str(x)) for x in args]
        ev = {"subp": argv}
        if update_env:
            ev["env"] = ["%s=%s" % kv for kv in update_env.items()]
        if cwd:
            ev["cwd"] = cwd
        rec["events"].append(ev)
        line = " ".join(argv)
        if line in fail:
            raise subp.ProcessExecutionError(cmd=args, exit_code=1, stdout="", stderr="")
        return subp.SubpResult(outputs.get(line, ""), "")

    def which(exe, *a, **kw):
        if exe.startswith("/"):
            return exe if os.path.isfile(inroot(exe)) and os.access(inroot(exe), os.X_OK) else None
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            if os.path.isfile(inroot(d + "/" + exe)) and os.access(inroot(d + "/" + exe), os.X_OK):
                return d + "/" + exe
        return None

    def install_packages(pkgs):
        names = [p if isinstance(p, str) else "=".join(p) for p in pkgs]
        rec["events"].append({"install": names})
        if any(f.endswith("install " + " ".join(names)) for f in fail):
            raise PackageInstallerError("Failed to install the following packages: %s" % names)

    def manage_service(action, service, *extra, **kw):
        rec["events"].append({"service": [action, service] + list(extra)})
        if any(f.endswith("%s %s" % (action, service)) for f in fail):
            raise subp.ProcessExecutionError(cmd=[action, service], exit_code=1)

    def readurl(url, *a, **kw):
        rec["events"].append({"readurl": url})
        return types.SimpleNamespace(contents=b"#!/bin/sh\n")

    def getfqdn(name=""):
        host = open(inroot("/etc/hostname")).read().strip() if os.path.exists(inroot("/etc/hostname")) else "localhost"
        if os.path.exists(inroot("/etc/hosts")):
            for line in open(inroot("/etc/hosts")):
                f = line.split("#", 1)[0].split()
                if len(f) >= 2 and host in f[1:]:
                    return next((n for n in f[1:] if "." in n), host)
        return host

    def chownbyname(path, user, group):
        rec["chown"].append([str(path), user, group])

    fos = Redirect(os, tmp, {"listdir": 1, "unlink": 1, "makedirs": 1, "chmod": 1, "remove": 1})
    fos.path = Redirect(os.path, tmp, {"exists": 1, "isfile": 1, "isdir": 1})
    futil = Redirect(util, tmp, {"write_file": 1, "ensure_dir": 1, "ensure_dirs": 0, "rename": 2, "copy": 2,
                                 "load_text_file": 1, "load_binary_file": 1, "sym_link": 0, "del_file": 1})
    real_ensure_dirs = util.ensure_dirs
    futil.ensure_dirs = lambda dirs, mode=0o755: real_ensure_dirs([futil._p(d) for d in dirs], mode)
    futil.sym_link = lambda src, dst, force=False: util.sym_link(src, futil._p(dst), force)
    futil.chownbyname = chownbyname
    futil.is_FreeBSD = lambda: osr["ID"] == "freebsd"
    fshutil = Redirect(shutil, tmp, {"move": 2})
    fsubp = types.SimpleNamespace(subp=fake_subp, which=which, ProcessExecutionError=subp.ProcessExecutionError,
                                  is_exe=lambda p: bool(which(p)), SubpResult=subp.SubpResult)
    saved = {}
    for name, val in [("os", fos), ("util", futil), ("shutil", fshutil), ("subp", fsubp)]:
        if hasattr(cc, name):
            saved[name] = getattr(cc, name)
            setattr(cc, name, val)
    if hasattr(cc, "templater"):
        saved["templater"] = cc.templater
        real_render = cc.templater.render_to_file
        cc.templater = types.SimpleNamespace(
            render_to_file=lambda fn, outfn, params, mode=0o644: real_render(fn, futil._p(outfn), params, mode))
    if hasattr(cc, "url_helper"):
        saved["url_helper"] = cc.url_helper
        cc.url_helper = types.SimpleNamespace(readurl=readurl)
    if hasattr(cc, "socket"):
        saved["socket"] = cc.socket
        cc.socket = types.SimpleNamespace(getfqdn=getfqdn)
    if hasattr(cc, "sysconfig"):
        saved["sysconfig"] = cc.sysconfig
        cc.sysconfig = types.SimpleNamespace(get_path=lambda n: "/usr/lib/python3.11")
    if hasattr(cc, "temp_utils"):
        saved["temp_utils"] = cc.temp_utils
    real_subp, real_which = subp.subp, subp.which
    subp.subp, subp.which = fake_subp, which  # Distro.do_as calls subp.subp
    had_pip = "pip" in sys.modules
    sys.modules["pip"] = (types.ModuleType("pip") if os.path.isdir(inroot("/usr/lib/python3/dist-packages/pip"))
                          else None)
    d = distros.fetch(dname)(dname, {}, helpers.Paths({"templates_dir": SRC_TEMPLATES}))
    d.install_packages = install_packages
    d.manage_service = manage_service
    d.get_tmp_exec_path = lambda: tempfile.gettempdir()

    class DS:
        def get_instance_id(self):
            return "iid-test"

    class Cloud:
        distro = d
        datasource = DS()

        def get_instance_id(self):
            return "iid-test"

        def get_template_filename(self, n):
            fn = os.path.join(SRC_TEMPLATES, n + ".tmpl")
            return fn if os.path.isfile(fn) else None

    try:
        cc.handle(MODULE, cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = str(e).replace(tmp + "/", "/")
    finally:
        for name, val in saved.items():
            setattr(cc, name, val)
        subp.subp, subp.which = real_subp, real_which
        if not had_pip:
            del sys.modules["pip"]
    files = {}
    for dp, dns, fns in os.walk(tmp):
        for n in dns:
            files["/" + os.path.relpath(os.path.join(dp, n), tmp) + "/"] = "dir %04o" % (os.stat(os.path.join(dp, n)).st_mode & 0o7777)
        for n in fns:
            p = os.path.join(dp, n)
            if os.path.islink(p):
                files["/" + os.path.relpath(p, tmp)] = "symlink -> %s\n" % os.readlink(p)
                continue
            with open(p, "rb") as f:
                content = f.read().decode()
            files["/" + os.path.relpath(p, tmp)] = "mode %04o\n%s" % (os.lstat(p).st_mode & 0o7777, content)
    rec["files"] = files
    shutil.rmtree(tmp)
    return rec


def main():
    result = {}
    for case, cdir, osr, dname, cfg, _ in goldenlib.cases(CASES, OSDIR):
        result[case] = run_case(cdir, osr, dname, cfg)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
