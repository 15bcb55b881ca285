#!/usr/bin/env python3
"""lib/init-stage.py — what upstream cloud-init's two init stages leave in
/var/lib/cloud/data over several boots of one disk.

Run as root by scripts/goldens/init-stage.sh (`just goldens init-stage`)
through scripts/upstream-cloudinit.sh, in fresh UTS and network namespaces
(so that nothing cloud-init does can reach this machine's hostname or
network):

    CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/init-stage.sh \
        [--check] [DIR...]  (default: pkg/stages/testdata/{instancify,cloudconfigtxt})

For every case directory <dir>/<case>/ (sorted), /var/lib/cloud starts
empty; then each boot-N/ directory (sorted) is one boot: /run is emptied
(a reboot), the boot's seed — meta-data, user-data and, when present,
vendor-data — is put in /var/lib/cloud/seed/nocloud, or served over
loopback HTTP at SEED_URL when the boot's `cmdline` names that URL (the
seed directory is then left empty), and the real CLI runs
`cloud-init init --local` then `cloud-init init`, with the kernel command
line from the boot's `cmdline` file (DEBUG_PROC_CMDLINE). The sandbox's
/etc/cloud holds `datasource_list: [NoCloud, None]`, `preserve_hostname:
true`, `network: {config: disabled}`, `system_info: {distro: debian}` (the
default ubuntu distro would wait for systemd-networkd, which the sandbox
has not) and upstream's own 05_logging.cfg, and no module lists: only the
datasource search, instancify and user-data consumption run.

Afterwards boot-N/want/ gets data/instance-id, data/previous-instance-id,
data/previous-datasource and instance/datasource as cloud-init wrote them
(SEED_URL's port written as PORT), and instance/cloud-config.txt and
instance/vendor-cloud-config.txt when cloud-init wrote them (the merged
cloud-config, with its "# from N files" header and PyYAML's layout), and
recoverable-errors.json: status.json's recoverable_errors of init-local and
init (the WARNING-and-above messages cloud-init's LogExporter collected).
--check compares instead of writing and exits 1 when something differs.
"""

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

SEED_URL = "http://127.0.0.1:8931/"
FILES = {
    "instance-id": "/var/lib/cloud/data/instance-id",
    "previous-instance-id": "/var/lib/cloud/data/previous-instance-id",
    "previous-datasource": "/var/lib/cloud/data/previous-datasource",
    "datasource": "/var/lib/cloud/instance/datasource",
}
# Written to want/ only when cloud-init wrote them.
OPTIONAL = {
    "cloud-config.txt": "/var/lib/cloud/instance/cloud-config.txt",
    "vendor-cloud-config.txt": "/var/lib/cloud/instance/vendor-cloud-config.txt",
}
SEED_FILES = ("meta-data", "user-data", "vendor-data")
CLOUD_CFG = """datasource_list: [NoCloud, None]
preserve_hostname: true
network: {config: disabled}
system_info: {distro: debian}
"""


def sandboxed():
    """True inside upstream-cloudinit.sh's namespace (/var/lib/cloud is a tmpfs)."""
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == "/var/lib/cloud" and line.split()[2] == "tmpfs"
                   for line in f)


def empty(d):
    os.makedirs(d, exist_ok=True)
    for n in os.listdir(d):
        p = os.path.join(d, n)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.remove(p)


class Seed(http.server.SimpleHTTPRequestHandler):
    served = "/nonexistent"

    def translate_path(self, path):
        return os.path.join(Seed.served, path.split("?")[0].lstrip("/"))

    def log_message(self, *args):
        pass


def boot(bdir):
    cmdline = ""
    if os.path.exists(os.path.join(bdir, "cmdline")):
        with open(os.path.join(bdir, "cmdline")) as f:
            cmdline = f.read().strip()
    empty("/run")
    seed = "/var/lib/cloud/seed/nocloud"
    empty(seed)
    if SEED_URL in cmdline:
        Seed.served = bdir
    else:
        for n in SEED_FILES:
            if os.path.exists(os.path.join(bdir, n)):
                shutil.copy(os.path.join(bdir, n), os.path.join(seed, n))
    env = dict(os.environ, DEBUG_PROC_CMDLINE=cmdline)
    for args in (["init", "--local"], ["init"]):
        p = subprocess.run([sys.executable, "-m", "cloudinit.cmd.main"] + args,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout)
            raise SystemExit("%s: cloud-init %s exited %d" % (bdir, " ".join(args), p.returncode))
    got = {}
    for name, path in FILES.items():
        with open(path) as f:
            got[name] = f.read().replace(SEED_URL, "http://127.0.0.1:PORT/")
    for name, path in OPTIONAL.items():
        if os.path.exists(path):
            with open(path) as f:
                got[name] = f.read()
    got["recoverable-errors.json"] = recoverable_errors()
    return got


def recoverable_errors():
    """status.json's recoverable_errors of the two init stages (what
    LogExporter collected: WARNING-and-above log messages by level), as
    sorted JSON; a level's messages keep cloud-init's order."""
    with open("/run/cloud-init/status.json") as f:
        v1 = json.load(f)["v1"]
    got = {stage: v1[stage]["recoverable_errors"] for stage in ("init-local", "init")}
    return json.dumps(got, indent=1, sort_keys=True) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("dirs", nargs="*", default=["pkg/stages/testdata/instancify", "pkg/stages/testdata/cloudconfigtxt"])
    a = ap.parse_args()
    if os.getuid() != 0 or not sandboxed():
        raise SystemExit("init-stage.py: run as root by scripts/goldens/init-stage.sh")
    with open("/etc/cloud/cloud.cfg.d/99-zz-instancify.cfg", "w") as f:
        f.write(CLOUD_CFG)
    # The logging configuration a real system has (file only, no syslog):
    # without one cloud-init falls back to basic logging with two
    # LogExporter handlers on the root logger and counts every recoverable
    # error twice.
    shutil.copy(os.path.join(os.environ["CLOUDINIT_SRC"], "config", "cloud.cfg.d", "05_logging.cfg"),
                "/etc/cloud/cloud.cfg.d/05_logging.cfg")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 8931), Seed)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    bad = 0
    for case in sorted(os.path.join(d, c) for d in a.dirs for c in os.listdir(d)):
        cdir = case
        if not os.path.isdir(cdir):
            continue
        empty("/var/lib/cloud")
        for b in sorted(os.listdir(cdir)):
            bdir = os.path.join(cdir, b)
            if not b.startswith("boot-"):
                continue
            got = boot(bdir)
            wdir = os.path.join(bdir, "want")
            for name, text in got.items():
                p = os.path.join(wdir, name)
                if a.check:
                    old = open(p).read() if os.path.exists(p) else None
                    if old != text:
                        print("%s: differs: %r, upstream %r" % (p, old, text))
                        bad += 1
                else:
                    os.makedirs(wdir, exist_ok=True)
                    with open(p, "w") as f:
                        f.write(text)
            print("%s/%s: %s" % (case, b, " ".join("%s=%s" % (k, v.strip()) for k, v in got.items() if k in FILES)))
    srv.shutdown()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
