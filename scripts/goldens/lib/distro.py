"""Record what upstream cloud-init's distro classes run, for pkg/distro's
upstream goldens (scripts/goldens/distro.sh runs this through
scripts/upstream-cloudinit.sh --python, one process per scenario, since
some classes mutate class attributes as they go).

  scripts/goldens/lib/distro.py DISTRO OS_ID VERSION_ID systemd|sysvinit dnf|nodnf

Every command is recorded, never run: subp.subp, and the file helpers
set_timezone uses, are replaced by recorders; `which` answers from the
scenario; util.system_info() reports OS_ID and VERSION_ID. Output: one
JSON document on stdout.
"""
import json
import os
import sys
import tempfile

from cloudinit import distros, helpers, subp, util
from cloudinit.config import cc_ntp

NAME, OS_ID, VERSION_ID, INIT, DNF = sys.argv[1:6]
PKGS = ["curl", ["vim", "2:9.0"], "jq"]
ACTIONS = ["start", "stop", "restart", "reload", "try-reload", "enable", "disable", "status"]

calls = []
present = set()


def fake_subp(args, *a, **kw):
    args = [str(x) for x in args]
    env = kw.get("update_env") or {}
    calls.append({"argv": args, "env": ["%s=%s" % kv for kv in sorted(env.items())]})
    out = ""
    if args[:2] == ["apt-cache", "pkgnames"]:
        out = "curl\nvim\njq\n"
    return subp.SubpResult(out, "")


def fake_which(name, *a, **kw):
    return "/usr/bin/" + name if name in present else None


def record(op, *args):
    args = [str(x) for x in args]
    if op == "write":  # drop cloud-init's dated "# Created by" header
        args[1] = "".join(
            line for line in args[1].splitlines(True) if not line.startswith("# Created by cloud-init")
        )
    calls.append({"file_op": [op] + args})


subp.subp = fake_subp
subp.which = fake_which
util.write_file = lambda path=None, content="", *a, filename=None, **kw: record("write", path or filename, content)
util.del_file = lambda path, *a, **kw: record("delete", path)
util.sym_link = lambda source, link, *a, **kw: record("symlink", source, link)
util.copy = lambda src, dest, *a, **kw: record("copy", src, dest)
util.system_info = lambda: {"dist": (OS_ID, VERSION_ID, ""), "variant": OS_ID, "system": "Linux"}
os.symlink = lambda s, l: record("symlink", s, l)


def take():
    out = list(calls)
    calls.clear()
    return out


tmp = tempfile.mkdtemp()
paths = helpers.Paths({"cloud_dir": tmp, "run_dir": tmp, "templates_dir": tmp})
systemd = INIT == "systemd"
distros.uses_systemd = lambda: systemd
present.update(["apt-get", "update-locale", "locale-gen"])
if DNF == "dnf":
    present.add("dnf")
name = NAME
cls = distros.fetch(name)
d = cls(name, {}, paths)
doc = {"distro": name, "os_id": OS_ID, "version_id": VERSION_ID, "init": INIT}
d.update_package_sources(force=True)
doc["update"] = take()
d.package_command("upgrade")
doc["upgrade"] = take()
d.install_packages(PKGS)
doc["install"] = take()
services = {}
for action in ACTIONS:
    d.manage_service(action, "sshd")
    services[action] = take()
doc["services"] = services
# set_timezone looks at the host: make it see a typical image (an
# /etc/localtime link, the zone's file present).
_islink, _exists, _isfile = os.path.islink, os.path.exists, os.path.isfile
os.path.islink = lambda p: True if p == "/etc/localtime" else _islink(p)
os.path.exists = lambda p: True if p == "/etc/localtime" else _exists(p)
os.path.isfile = lambda p: True if str(p).startswith("/usr/share/zoneinfo/") else _isfile(p)
d.set_timezone("Europe/Berlin")
os.path.islink, os.path.exists, os.path.isfile = _islink, _exists, _isfile
doc["set_timezone"] = take()
# Locale, keyboard and hostname read the host's files: make every file
# cloud-init would read absent (an unconfigured image) and record writes.
_load = util.load_text_file


def absent(path, *a, **kw):
    raise OSError(2, "absent in the recording", path)


def attempt(key, fn, *args):
    util.load_text_file = absent
    os.path.exists = lambda p: str(p).startswith("/usr/share/bkeymaps/")
    os.path.isdir = lambda p: str(p).startswith("/usr/share/bkeymaps/")
    os.path.isfile = lambda p: str(p).startswith("/usr/share/bkeymaps/")
    util.ensure_dir = lambda *a, **kw: None
    try:
        fn(*args)
        doc[key] = take()
    except Exception as e:  # not supported there, or needs a real file
        doc[key] = "error: " + type(e).__name__
        take()
    finally:
        util.load_text_file = _load
        os.path.exists, os.path.isdir, os.path.isfile = _exists, _isdir, _isfile


_isdir = os.path.isdir
attempt("apply_locale", d.apply_locale, "de_DE.UTF-8")
attempt("set_keymap", d.set_keymap, "de", "pc105", "nodeadkeys", "")
attempt("write_hostname", d._write_hostname, "node1", d.hostname_conf_fn)
attempt("apply_hostname", d._apply_hostname, "node1")
doc["localhost_ip"] = d._get_localhost_ip()
doc["hostname_conf_fn"] = getattr(d, "hostname_conf_fn", "")
doc["default_locale"] = getattr(d, "default_locale", "")
doc["ci_sudoers_fn"] = d.ci_sudoers_fn
doc["usr_lib_exec"] = d.usr_lib_exec
doc["ssh_svcname"] = d._cfg.get("ssh_svcname", "")
doc["preferred_ntp_clients"] = list(d.preferred_ntp_clients)
doc["ntp_clients"] = {
    k: {kk: vv for kk, vv in v.items() if kk not in ("template", "template_name")}
    for k, v in cc_ntp.distro_ntp_client_configs(name).items()
}
json.dump(doc, sys.stdout, indent=1, sort_keys=True)
print()
