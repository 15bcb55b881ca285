"""Run upstream cloud-init's handler of each "vendor" module (wireguard,
ssh_import_id, grub_dpkg, spacewalk, disable_ec2_metadata, byobu, snap,
ubuntu_autoinstall, fan, landscape, install_hotplug, lxd, ubuntu_drivers,
reset_rmc, rh_subscription...) on every case of
pkg/modules/testdata/modgolden/<module>/ (a module that moved to a family
package: pkg/modules/<family>/testdata/modgolden/<module>/, FAMILY) and
record what it did, for pkg/modules' TestVendorUpstream (and the family's
own test: pkg/modules/users' TestSSHImportIDUpstream).

  scripts/goldens/vendor.py pkg/modules/testdata/modgolden pkg/modules/testdata/modgolden/os MODULE... \
      > pkg/modules/testdata/vendor-upstream.json

A case is laid out as scripts/goldens/lib/goldenlib.py reads it, plus optional
`outputs.yaml` (stdout of commands, by argv joined with spaces; a shell
string as `sh -c STRING`) and `fail.yaml` (exit code of commands, same keys) and `platform` (the
datasource: None, NoCloud (the default), Ec2, OpenStack... whose class gives
the update events).
Nothing is run or changed on this machine: files are read from the case's
root/ tree, writes and deletions are recorded (path -> content / mode),
commands are recorded with their input size (and answered from the case),
packages installed and services managed go to the distro class of the
case's os-release with its subp recorded. Output per "module/case": files,
modes, deleted, commands, installed, warnings, error.
"""
import json
import logging
import os
import pwd
import sys

import yaml
from cloudinit import distros, helpers, subp, util

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

# The modules of this area (without arguments: all, into vendor-upstream.json).
VENDOR_MODULES = ("disable_ec2_metadata byobu ubuntu_autoinstall fan grub_dpkg spacewalk ssh_import_id snap landscape lxd "
                  "wireguard reset_rmc ubuntu_drivers install_hotplug raspberry_pi ubuntu_pro rh_subscription").split()
goldenlib.args_or_defaults(["pkg/modules/testdata/modgolden", "pkg/modules/testdata/modgolden/os"] + VENDOR_MODULES, out="pkg/modules/testdata/vendor-upstream.json")

MODGOLDEN, OSDIR = sys.argv[1:3]
# The vendor modules whose cases live in a family package.
FAMILY = {"ssh_import_id": "users"}
MODULES = sys.argv[3:]
IID_DIR = "/var/lib/cloud/instances/iid-test"
# PATH as cloudroot runs commands in a target; a module that changes it
# (reset_rmc) has the change recorded with its commands.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
os.environ["PATH"] = DEFAULT_PATH
os.environ["HOME"], os.environ["USER"] = "/root", "root"
# The distro's default user (system_info.default_user.name of its cloud.cfg)
# and the users the Go harness adds to every case's /etc/passwd.
DEFAULT_USER = {"ubuntu": "ubuntu", "debian": "debian", "rhel": "cloud-user", "fedora": "fedora",
                "alpine": "alpine", "arch": "arch", "opensuse-leap": "opensuse", "sles": "sles", "photon": "photon"}

real = {
    "write_file": util.write_file,
    "del_file": util.del_file,
    "load_text_file": util.load_text_file,
    "exists": os.path.exists,
    "isdir": os.path.isdir,
    "isfile": os.path.isfile,
    "subp": subp.subp,
    "which": subp.which,
    "system_info": util.system_info,
    "kernel_version": util.kernel_version,
    "getpwnam": pwd.getpwnam,
    "del_dir": util.del_dir,
}


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def run_case(modname, case, cdir, osr, dname, cfg, systemd):
    mod = __import__("cloudinit.config.cc_" + modname, fromlist=["handle"])
    root = os.path.join(cdir, "root")
    inroot = lambda p: str(p) if str(p).startswith(root + "/") else os.path.join(root, str(p).lstrip("/"))
    outputs, fails = {}, {}
    for fn, d in (("outputs.yaml", outputs), ("fail.yaml", fails)):
        if os.path.exists(os.path.join(cdir, fn)):
            with open(os.path.join(cdir, fn)) as f:
                d.update(yaml.safe_load(f) or {})
    platform = "NoCloud"
    if os.path.exists(os.path.join(cdir, "platform")):
        with open(os.path.join(cdir, "platform")) as f:
            platform = f.read().strip()
    rec = {"files": {}, "modes": {}, "deleted": [], "commands": [], "installed": [], "warnings": []}

    def write(filename=None, content="", mode=0o644, omode="wb", *a, **kw):
        p = str(filename)
        content = content if isinstance(content, str) else content.decode()
        if "a" in omode and p in rec["files"]:
            content = rec["files"][p] + content
        rec["files"][p] = content
        rec["modes"][p] = "%04o" % mode

    def load(p, *a, **kw):
        if str(p) in rec["files"]:
            return rec["files"][str(p)]
        return real["load_text_file"](inroot(p))

    def fake_subp(args, *a, data=None, update_env=None, shell=False, rcs=None, **kw):
        if isinstance(args, (str, bytes)):
            args = ["sh", "-c", args.decode() if isinstance(args, bytes) else args]
        key = " ".join(str(x) for x in args)
        env = dict(update_env or {})
        if os.environ.get("PATH") != DEFAULT_PATH:
            env["PATH"] = os.environ["PATH"]
        env = ["%s=%s" % kv for kv in sorted(env.items())]
        line = " ".join(env + [key])
        if data is not None:
            line += " <stdin %d bytes>" % len(data if isinstance(data, (str, bytes)) else str(data))
        rec["commands"].append(line)
        code = fails.get(key, 0)
        out = outputs.get(key, "")
        if code not in (rcs or [0]):
            raise subp.ProcessExecutionError(stdout=out, stderr="", exit_code=code, cmd=key)
        return subp.SubpResult(out, "")

    def which(exe, *a, **kw):
        if exe.startswith("/"):
            return exe if real["isfile"](inroot(exe)) else None
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            p = inroot(os.path.join(d, exe))
            if real["isfile"](p) and os.access(p, os.X_OK):
                return os.path.join(d, exe)
        return None

    def del_file(p, *a, **kw):
        rec["deleted"].append(str(p))

    def del_dir(p):
        # shutil.rmtree's failure on a missing tree, else recorded.
        if not os.path.isdir(p):
            raise FileNotFoundError(2, "No such file or directory", str(p))
        rec["deleted"].append(str(p))

    util.write_file = write
    util.del_file = del_file
    util.del_dir = del_dir
    util.load_text_file = load
    os.path.exists = lambda p: str(p) in rec["files"] or os.access(inroot(p), os.F_OK)
    os.path.isdir = lambda p: real["isdir"](inroot(p))
    os.path.isfile = lambda p: real["isfile"](inroot(p))
    subp.subp = fake_subp
    subp.which = which
    util.system_info = lambda: {"dist": (osr["ID"], osr.get("VERSION_ID", ""), ""), "variant": osr["ID"],
                                "system": "Linux"}
    util.kernel_version = lambda: (6, 1)
    users = {"root", DEFAULT_USER[osr["ID"]], "user1", "user2", "user3"}

    def getpwnam(name):
        if name not in users:
            raise KeyError("getpwnam(): name not found: '%s'" % name)
        return ("x",)

    pwd.getpwnam = getpwnam
    paths = helpers.Paths({"cloud_dir": "/var/lib/cloud"})
    paths.get_ipath_cur = lambda name=None: IID_DIR if name is None else os.path.join(IID_DIR, name)
    # manage_service asks the class whether systemd runs.
    cls = type("Distro", (distros.fetch(dname),), {"uses_systemd": classmethod(lambda c: systemd)})
    d = cls(dname, {"default_user": {"name": DEFAULT_USER[osr["ID"]]}}, paths)
    d.install_packages = lambda pkgs: rec["installed"].extend(pkgs)
    # (cloud-init refreshes the sources once per instance, and the install
    # that follows needs no second refresh; cloudroot's install refreshes.)
    d.update_package_sources = lambda *a, **kw: None

    class Hostname:
        hostname = "myhost.example.com"

    # The real class's update events and udev rules, without probing.
    base = getattr(__import__("cloudinit.sources.DataSource" + platform, fromlist=["x"]), "DataSource" + platform)

    class DS(base):
        platform_type = platform.lower()

        def __init__(self):
            self.paths = paths

        def get_hostname(self, fqdn=False, *a, **kw):
            return Hostname()

    class Cloud:
        distro = d
        datasource = DS()

        def __init__(self):
            self.paths = paths

        def run(self, name, functor, args, freq=None):
            # cloud.run with a PER_ONCE semaphore in /var/lib/cloud/sem:
            # skipped when the case's tree has it, else taken and run.
            sem = "/var/lib/cloud/sem/%s.%s" % (helpers.canon_sem_name(name), freq)
            if real["exists"](inroot(sem)):
                return
            rec["files"][sem] = "<semaphore>"
            rec["modes"][sem] = "0644"
            functor(*args)

    if modname == "ubuntu_drivers":
        # python3-debconf's communicator runs `debconf-communicate
        # -fnoninteractive cloud-init` and writes each command to it.
        class Communicator:
            def __init__(self, owner):
                self.argv = ["debconf-communicate", "-fnoninteractive", owner]

            def __enter__(self):
                return self

            def __exit__(self, *a):
                return False

            def command(self, *args):
                fake_subp(self.argv, data=" ".join(args) + "\n")

        class Debconf:
            DebconfCommunicator = Communicator

        mod.HAS_DEBCONF, mod.debconf = True, Debconf
        mod.temp_utils.mkdtemp = lambda *a, **kw: "/var/tmp/cloud-init/ubuntu-drivers"
        d.get_tmp_exec_path = lambda: "/var/tmp/cloud-init"
        isdir = os.path.isdir
        os.path.isdir = lambda p: str(p).startswith("/var/tmp/cloud-init/ubuntu-drivers") or isdir(p)
    if modname == "ubuntu_pro":
        install_fake_uaclient(fake_subp)
    if modname == "landscape":
        mod.LSC_CLIENT_CFG_FILE = inroot("/etc/landscape/client.conf")
    log = Recorder()
    logging.getLogger().addHandler(log)
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        mod.handle(modname, cfg, Cloud(), [])
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        logging.getLogger().removeHandler(log)
        util.write_file, util.del_file, util.load_text_file = real["write_file"], real["del_file"], real["load_text_file"]
        os.path.exists, os.path.isdir, os.path.isfile = real["exists"], real["isdir"], real["isfile"]
        subp.subp, subp.which = real["subp"], real["which"]
        util.system_info, util.kernel_version = real["system_info"], real["kernel_version"]
        pwd.getpwnam, util.del_dir = real["getpwnam"], real["del_dir"]
    rec["warnings"] = log.lines
    os.environ["PATH"] = DEFAULT_PATH
    return rec


def install_fake_uaclient(run):
    """The pro client's Python API (uaclient), which cc_ubuntu_pro imports,
    as the `pro api` calls cloudroot makes: each call is recorded as that
    command, answered from the case's outputs.yaml, and its JSON answer read
    as the client would report it."""
    import types

    class UserFacingError(Exception):
        def __init__(self, msg):
            super().__init__(msg)
            self.msg = msg

    class AlreadyAttachedError(UserFacingError):
        pass

    def api(endpoint, data=None):
        argv = ["pro", "api", endpoint] + (["--data", data] if data is not None else [])
        try:
            out = run(argv).stdout
        except subp.ProcessExecutionError as e:
            out = e.stdout
        try:
            resp = json.loads(out)
        except ValueError:
            raise UserFacingError("pro api %s: answer is not JSON" % endpoint)
        if resp.get("result") != "success" or resp.get("errors"):
            err = (resp.get("errors") or [{}])[0]
            cls = AlreadyAttachedError if err.get("code") == "already-attached" else UserFacingError
            raise cls(err.get("title") or err.get("message") or "failure")
        return resp["data"]["attributes"]

    class Options:
        def __init__(self, enable=None, enable_beta=None):
            self.enable, self.enable_beta = enable, enable_beta

    def should_auto_attach():
        return types.SimpleNamespace(**api("u.pro.attach.auto.should_auto_attach.v1"))

    def full_auto_attach(options):
        data = {k: v for k, v in (("enable", options.enable), ("enable_beta", options.enable_beta)) if v is not None}
        api("u.pro.attach.auto.full_auto_attach.v1", json.dumps(data, sort_keys=True, separators=(",", ":")))

    mods = {
        "uaclient": {}, "uaclient.api": {},
        "uaclient.api.exceptions": {"UserFacingError": UserFacingError, "AlreadyAttachedError": AlreadyAttachedError},
        "uaclient.api.u": {}, "uaclient.api.u.pro": {}, "uaclient.api.u.pro.attach": {},
        "uaclient.api.u.pro.attach.auto": {},
        "uaclient.api.u.pro.attach.auto.should_auto_attach": {},
        "uaclient.api.u.pro.attach.auto.should_auto_attach.v1": {"should_auto_attach": should_auto_attach},
        "uaclient.api.u.pro.attach.auto.full_auto_attach": {},
        "uaclient.api.u.pro.attach.auto.full_auto_attach.v1": {"FullAutoAttachOptions": Options,
                                                               "full_auto_attach": full_auto_attach},
    }
    for name, attrs in mods.items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m


result = {}
for modname in MODULES:
    cases_dir = os.path.join(MODGOLDEN, modname)
    if modname in FAMILY:
        cases_dir = os.path.join(MODGOLDEN, "..", "..", FAMILY[modname], "testdata", "modgolden", modname)
    for case, cdir, osr, dname, cfg, systemd in goldenlib.cases(cases_dir, OSDIR):
        result[modname + "/" + case] = run_case(modname, case, cdir, osr, dname, cfg, systemd)
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
