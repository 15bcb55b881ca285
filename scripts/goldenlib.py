"""Shared case reading for the scripts that run upstream cloud-init's
config modules over pkg/modules/testdata/modgolden/<module> cases.

Each case directory holds `distro` (the name of an os-release file in the
os dir), `config.yaml` (the module's cloud-config) and optionally `init`
("systemd" or not). Run through scripts/upstream-cloudinit.sh --python.
"""

import logging
import os

import yaml

# os-release ID -> cloud-init distro class name.
CLASS = {"debian": "debian", "ubuntu": "ubuntu", "rhel": "rhel", "fedora": "fedora", "opensuse-leap": "suse",
         "sles": "suse", "alpine": "alpine", "arch": "arch", "photon": "photon"}


def os_release(osdir, name):
    """The KEY=value pairs of os-release file `name` in osdir."""
    kv = {}
    with open(os.path.join(osdir, name)) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                kv[k] = v.strip('"')
    return kv


def cases(cases_dir, osdir):
    """Yields (case, cdir, osr, distro class name, cfg, systemd) per case, sorted."""
    for case in sorted(os.listdir(cases_dir)):
        cdir = os.path.join(cases_dir, case)
        if not os.path.isdir(cdir):
            continue
        with open(os.path.join(cdir, "distro")) as f:
            osr = os_release(osdir, f.read().strip())
        with open(os.path.join(cdir, "config.yaml")) as f:
            cfg = yaml.safe_load(f) or {}
        systemd = False
        if os.path.exists(os.path.join(cdir, "init")):
            with open(os.path.join(cdir, "init")) as f:
                systemd = f.read().strip() == "systemd"
        yield case, cdir, osr, CLASS[osr["ID"]], cfg, systemd


class Capture(logging.Handler):
    """The log lines (INFO and up) as "FILE[LEVEL]: msg" and, as cloud-init's
    LogExporter keeps them for status.json, the messages of WARNING and up by
    level name."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []
        self.recoverable = {}

    def emit(self, record):
        msg = record.getMessage()
        self.lines.append("%s[%s]: %s" % (record.filename, record.levelname, msg))
        if record.levelno >= logging.WARNING:
            self.recoverable.setdefault(record.levelname, []).append(msg)
