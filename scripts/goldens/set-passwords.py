"""Run upstream cloud-init's cc_set_passwords.handle on each case of
pkg/modules/users/testdata/modgolden/set_passwords and record what it
decided, for pkg/modules/users' TestSetPasswordsUpstream.

  scripts/goldens/set-passwords.py pkg/modules/users/testdata/modgolden/set_passwords \
      pkg/modules/testdata/modgolden/os > pkg/modules/users/testdata/set-passwords-upstream.json

Nothing is run or changed on this machine: the distro's chpasswd,
expire_passwd and manage_service are recorders, subp answers `systemctl
show` from the case's outputs.yaml, ssh_util's sshd_config is a copy of
the case's (or the base image's) in a temporary directory, and the random
password generator is replaced so that the output is stable. Output: per
case, the password changes (user, text|hash|random, the value unless
random), the expired users, the restarts, and the resulting sshd
configuration files.
"""
import json
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import distros, helpers, ssh_util, subp, util
from cloudinit.config import cc_set_passwords

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/users/testdata/modgolden/set_passwords", "pkg/modules/testdata/modgolden/os"], out="pkg/modules/users/testdata/set-passwords-upstream.json")

CASES, OSDIR = sys.argv[1:3]
# The shared base-debian beside the os-release directory (pkg/modules/testdata).
BASE = os.path.join(os.path.dirname(OSDIR.rstrip("/")), "..", "base-debian")


def os_release(name):
    kv = {}
    with open(os.path.join(OSDIR, name)) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                kv[k] = v.strip('"')
    return kv


CLASS = {"debian": "debian", "ubuntu": "ubuntu", "rhel": "rhel", "fedora": "fedora", "opensuse-leap": "opensuse",
         "sles": "sles", "alpine": "alpine", "arch": "arch", "photon": "photon"}
DEFAULT_USER = {"debian": "debian", "ubuntu": "ubuntu", "rhel": "cloud-user", "fedora": "fedora",
                "opensuse": "opensuse", "sles": "sles", "alpine": "alpine", "arch": "arch", "photon": "photon"}

result = {}
for case in sorted(os.listdir(CASES)):
    cdir = os.path.join(CASES, case)
    with open(os.path.join(cdir, "distro")) as f:
        osr = os_release(f.read().strip())
    cls_name = CLASS[osr["ID"]]
    with open(os.path.join(cdir, "config.yaml")) as f:
        cfg = yaml.safe_load(f) or {}
    outputs = {}
    if os.path.exists(os.path.join(cdir, "outputs.yaml")):
        with open(os.path.join(cdir, "outputs.yaml")) as f:
            outputs = yaml.safe_load(f) or {}
    booted = os.path.exists(os.path.join(cdir, "booted"))
    systemd = False
    if os.path.exists(os.path.join(cdir, "init")):
        with open(os.path.join(cdir, "init")) as f:
            systemd = f.read().strip() == "systemd"

    rec = {"passwords": [], "expired": [], "services": [], "random": []}
    tmp = tempfile.mkdtemp()
    sshd = os.path.join(tmp, "sshd_config")
    for src in (os.path.join(BASE, "etc/ssh/sshd_config"), os.path.join(cdir, "root/etc/ssh/sshd_config")):
        if os.path.exists(src):
            with open(src) as f:
                text = f.read().replace("/etc/ssh/sshd_config", sshd)
            with open(sshd, "w") as f:
                f.write(text)
    # The stock cloud.cfg's users: [default], as cloudroot's merged config has it.
    cfg.setdefault("users", ["default"])

    cls = distros.fetch(cls_name)
    d = cls(cls_name, {"default_user": {"name": DEFAULT_USER[cls_name]}}, helpers.Paths({}))
    n = [0]

    def rand_pw(pwlen=20):
        n[0] += 1
        return "RANDOMPW%d" % n[0]

    def chpasswd(plist, hashed):
        for u, p in plist:
            kind = "hash" if hashed else "text"
            if p.startswith("RANDOMPW"):
                kind, p = "random", ""
                rec["random"].append(u)
            rec["passwords"].append([u, kind, p])

    def fake_subp(args, *a, **kw):
        args = [str(x) for x in args]
        out = outputs.get(" ".join(args), "")
        return subp.SubpResult(out, "")

    d.chpasswd = chpasswd
    d.expire_passwd = lambda u: rec["expired"].append(u)
    d.manage_service = lambda action, svc, *extra, **kw: rec["services"].append([action, svc] + list(extra))
    d.uses_systemd = lambda: systemd and booted
    cc_set_passwords.rand_user_password = rand_pw
    cc_set_passwords.subp.subp = fake_subp
    orig_update = ssh_util.update_ssh_config
    cc_set_passwords.update_ssh_config = lambda updates, fname=None: orig_update(updates, fname=sshd)

    class Cloud:
        distro = d

    errors = None
    try:
        cc_set_passwords.handle("set_passwords", cfg, Cloud(), [])
    except Exception as e:  # the module's own failure is part of the result
        errors = type(e).__name__
    files = {}
    for root, _dirs, names in os.walk(tmp):
        for nm in names:
            p = os.path.join(root, nm)
            with open(p) as f:
                files[os.path.relpath(p, tmp)] = f.read().replace(sshd, "/etc/ssh/sshd_config")
    shutil.rmtree(tmp)
    rec["sshd_files"] = files
    rec["failed"] = errors is not None
    result[case] = rec
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
