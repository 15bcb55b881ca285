#!/usr/bin/env python3
"""goldens/ds-identify.py — upstream ds-identify's decision on every pkg/identify fixture.

    CLOUDINIT_SRC=/path/to/cloud-init scripts/upstream-cloudinit.sh \
        --python scripts/goldens/ds-identify.py [--check] [--dir pkg/identify/testdata/upstream]

Input: <dir>/fixtures.json, written by `go test ./pkg/identify -run
TestUpstreamFixtures -update` (every golden case and scenario of
pkg/identify as data). For each fixture a fake root is laid out the way
upstream's tests/unittests/test_ds_identify.py lays one out, and
upstream's own tools/ds-identify (POSIX sh, from $CLOUDINIT_SRC) runs
its `main` in it:

  - files         → written under PATH_ROOT (sockets made as sockets)
  - dmi           → PATH_ROOT/sys/class/dmi/id/<field>
  - cmdline       → PATH_ROOT/proc/cmdline
  - fs            → the output of a mocked `blkid -c /dev/null -o export`
                    and of block_dev_with_label (the /dev/disk/by-label
                    links); sizes → PATH_ROOT/sys/class/block/<dev>/size
  - virt          → a mocked detect_virt; when empty, SYSTEMD_VIRTUALIZATION
                    from env is used (PATH_ROOT/run/systemd exists) or virt
                    stays unavailable
  - uname         → a mocked `uname` answering `uname -svm`
  - env           → the process environment
  - guestinfo     → mocked vmware-rpctool answers (none: no VMware tools)
  - debug_level   → DEBUG_LEVEL
  - args          → main's arguments

As in upstream's tests, dmidecode and kenv are mocked absent, and the few
checks that look at absolute paths (the /dev/lxd/sock socket, the
/etc/cloud/cloud-init.disabled marker, /dev/floppy, which the fixture's
dev/floppy file stands for) look inside PATH_ROOT (/config-drive stays
absolute: that check cannot be shown here);
WSL's Windows profile is $USERPROFILE inside PATH_ROOT and the instance
name $WSL_DISTRO_NAME (upstream's tests mock WSL_profile_dir the same way).
ds-identify's built-in policy defaults are left as they are.

Output: <dir>/ds-identify-26.json, fixture name → {rc, datasource_list,
cloud_cfg, checks} (checks: each datasource checked → found, maybe or
notfound, from ds-identify's log at DEBUG_LEVEL=2). --check exits 1 when it is stale.
"""

import argparse
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

GOLDEN = "ds-identify-26.json"

MOCKS = r"""
uname() { cat "$PATH_ROOT/_mock/uname"; }
blkid() { cat "$PATH_ROOT/_mock/blkid"; }
dmi_decode() { echo "No dmidecode program. ERROR." >&2; return 1; }
get_kenv_field() { echo "No kenv program. ERROR." >&2; return 1; }
is_socket_file() { [ -S "${PATH_ROOT}$1" ]; }
vmware_has_rpctool() { [ -d "$PATH_ROOT/_mock/guestinfo" ]; }
vmware_has_vmtoolsd() { return 1; }
vmware_rpctool_guestinfo() {
    [ -f "$PATH_ROOT/_mock/guestinfo/$1" ] || return 1
    grep "[[:alnum:]]" "$PATH_ROOT/_mock/guestinfo/$1"
}
vmware_rpctool_guestinfo_err() {
    if [ -f "$PATH_ROOT/_mock/guestinfo/$1" ]; then
        grep "[[:alnum:]]" "$PATH_ROOT/_mock/guestinfo/$1"
    else
        echo "No value found"
        return 1
    fi
}
probe_floppy() { [ -e "${PATH_ROOT}/dev/floppy" ]; }
block_dev_with_label() {
    local dev=""
    dev=$(awk -v l="$1" '$1 == l { print $2; exit }' "$PATH_ROOT/_mock/labels")
    [ -n "$dev" ] || return 1
    _RET="${PATH_DEV_DISK}/by-label/$1"
}
is_disabled() {
    if [ -f "${PATH_ROOT}/etc/cloud/cloud-init.disabled" ]; then
        debug 1 "disabled by marker file /etc/cloud/cloud-init.disabled"
        return 0
    fi
    if [ "${KERNEL_CMDLINE:-}" = "cloud-init=disabled" ]; then
        debug 1 "disabled by KERNEL_CMDLINE environment variable"
        return 0
    fi
    case "$DI_KERNEL_CMDLINE" in
        *cloud-init=disabled*)
            debug 1 "disabled by kernel command line cloud-init=disabled"
            return 0
            ;;
    esac
    return 1
}
WSL_profile_dir() {
    [ -n "${USERPROFILE:-}" ] || return 1
    _RET="${PATH_ROOT}${USERPROFILE}"
}
WSL_instance_name() { _RET="${WSL_DISTRO_NAME:-}"; }
"""


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def blkid_export(fss):
    blocks = []
    for d in fss or []:
        lines = ["DEVNAME=%s" % d["device"]]
        if d.get("label"):
            lines.append("LABEL=%s" % d["label"])
        if d.get("uuid"):
            lines.append("UUID=%s" % d["uuid"])
        if d.get("type"):
            lines.append("TYPE=%s" % d["type"])
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def run(dsid, name, fx, show=False):
    root = tempfile.mkdtemp(prefix="dsid-")
    socks = []
    try:
        for p, f in (fx.get("files") or {}).items():
            dst = os.path.join(root, p)
            if f.get("socket"):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind(dst)
                socks.append(s)
                continue
            data = f.get("data", "")
            data = base64.b64decode(data) if f.get("base64") else data.encode()
            write(dst, data, int(f.get("mode", "0644"), 8))
            if f.get("mtime"):
                os.utime(dst, (f["mtime"], f["mtime"]))
        os.makedirs(os.path.join(root, "sys/class/dmi/id"), exist_ok=True)
        for k, v in (fx.get("dmi") or {}).items():
            write(os.path.join(root, "sys/class/dmi/id", k), (v + "\n").encode())
        write(os.path.join(root, "proc/cmdline"),
              (fx.get("cmdline", "") + "\n").encode())
        for d in fx.get("fs") or []:
            if d.get("size"):
                dev = d["device"].rsplit("/", 1)[-1]
                write(os.path.join(root, "sys/class/block", dev, "size"),
                      ("%d\n" % (d["size"] // 512)).encode())
        u = fx.get("uname") or {}
        write(os.path.join(root, "_mock/uname"), (" ".join(
            x for x in (u.get("Sysname"), u.get("Version"), u.get("Machine"))
            if x) + "\n").encode())
        write(os.path.join(root, "_mock/blkid"),
              blkid_export(fx.get("fs")).encode())
        write(os.path.join(root, "_mock/labels"), "".join(
            "%s %s\n" % (d["label"], d["device"])
            for d in fx.get("fs") or [] if d.get("label")).encode())
        gi = fx.get("guestinfo")
        if gi is not None:
            os.makedirs(os.path.join(root, "_mock/guestinfo"), exist_ok=True)
            for k, v in gi.items():
                write(os.path.join(root, "_mock/guestinfo", k), v.encode())
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C"}
        env.update(fx.get("env") or {})
        virt = fx.get("virt") or ""
        mocks = MOCKS
        if virt:
            mocks += 'detect_virt() { _RET="%s"; return 0; }\n' % virt
        elif env.get("SYSTEMD_VIRTUALIZATION"):
            os.makedirs(os.path.join(root, "run/systemd"), exist_ok=True)
        else:
            mocks += 'detect_virt() { _RET="unavailable"; return 0; }\n'
        head = [
            "DI_MAIN=noop",
            # Level 2 logs every check's verdict (the decision is the same).
            "DEBUG_LEVEL=2",
            "PATH_ROOT='%s'" % root,
            "PATH_DI_ENV='%s/ds-identify-env'" % root,
            ". '%s'" % dsid,
        ]
        args = " ".join("'%s'" % a for a in (fx.get("args") or "").split())
        script = "\n".join(head) + "\n" + mocks + "main %s\n" % args
        write(os.path.join(root, "_shwrap"), script.encode())
        p = subprocess.run(["sh", "-c", ". '%s/_shwrap'" % root], env=env,
                           capture_output=True, timeout=60, check=False)
        log = ""
        logf = os.path.join(root, "run/cloud-init/ds-identify.log")
        if os.path.exists(logf):
            with open(logf) as f:
                log = f.read()
        checks = {}
        for m in re.finditer(r"check for '([^']+)' returned (found|maybe|not-found)",
                             log):
            checks[m.group(1)] = m.group(2).replace("-", "")
        if show:
            sys.stdout.write(log)
            sys.stdout.write(p.stderr.decode(errors="replace"))
        cfg_path = os.path.join(root, "run/cloud-init/cloud.cfg")
        cfg = None
        dslist = None
        if os.path.exists(cfg_path):
            with open(cfg_path) as f:
                cfg = f.read()
            for line in cfg.splitlines():
                if line.startswith("datasource_list:"):
                    v = line.split(":", 1)[1].strip().strip("[]")
                    dslist = [x.strip() for x in v.split(",") if x.strip()]
        return {"rc": p.returncode, "datasource_list": dslist,
                "cloud_cfg": cfg, "checks": checks}
    finally:
        for s in socks:
            s.close()
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="pkg/identify/testdata/upstream")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--show", metavar="NAME",
                    help="run one fixture and print ds-identify's log")
    args = ap.parse_args()
    src = os.environ.get("CLOUDINIT_SRC")
    if not src or not os.path.exists(os.path.join(src, "tools/ds-identify")):
        sys.exit("set CLOUDINIT_SRC to a canonical/cloud-init checkout")
    dsid = os.path.abspath(os.path.join(src, "tools/ds-identify"))
    with open(os.path.join(args.dir, "fixtures.json")) as f:
        fixtures = json.load(f)
    if args.show:
        print(json.dumps(run(dsid, args.show, fixtures[args.show], True)))
        return 0
    out = {name: run(dsid, name, fx) for name, fx in sorted(fixtures.items())}
    got = json.dumps(out, indent=1, sort_keys=True) + "\n"
    dst = os.path.join(args.dir, GOLDEN)
    if args.check:
        old = open(dst).read() if os.path.exists(dst) else ""
        if old != got:
            print("stale: %s" % dst)
            return 1
        return 0
    with open(dst, "w") as f:
        f.write(got)
    print("%s: %d fixtures" % (dst, len(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
