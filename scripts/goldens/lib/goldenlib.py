"""goldenlib — the one library of the golden generators in scripts/goldens/.

An area is scripts/goldens/AREA.py or scripts/goldens/AREA.sh; `just goldens
AREA` regenerates it from upstream cloud-init 26.2 (`just goldens all`: every
area), always inside the throwaway setup of scripts/upstream-cloudinit.sh
(root: a private mount namespace with tmpfs over /run, /var/lib/cloud,
/var/log and /etc/cloud, `datasource_list: [None]`):

  AREA.py  one Python process, run as `scripts/upstream-cloudinit.sh --python
           scripts/goldens/AREA.py`. Without arguments it works from the
           repository root on its default inputs and writes its default
           outputs (args_or_defaults); with arguments it takes them as before
           (explicit inputs, output on stdout).
  AREA.sh  an area that needs more than one process (a CLI run per case, a
           network or UTS namespace, a loop of fresh interpreters); it
           sources lib/goldenlib.sh and keeps its Python parts in lib/.

Case layout shared by the module generators (cases()): one directory per case
under the module's case directory, holding `distro` (the name of an
os-release file in the os directory), `config.yaml` (the module's
cloud-config) and optionally `init` ("systemd" or not). Outputs are written
as the generators always wrote them: the bytes the generator prints become
the output file (write_stdout_to), or files the generator writes itself.

An area's name is never the name of a Python module: scripts/goldens is
the first entry of sys.path of a generator there, so a locale.py would hide
the standard library's locale (cc_locale's area is cc-locale).

Paths are relative to the repository root: pkg/modules/testdata is about to
be split by module family, so each area names its testdata directory once,
at its top.
"""

import logging
import os
import shutil
import subprocess
import sys

import yaml

# Python randomises the order of sets of strings per process unless
# PYTHONHASHSEED is fixed, and cloud-init iterates sets (the packages a module
# installs, the distros and frequencies of module metadata...): a generator
# started without PYTHONHASHSEED=0 (`just goldens` and goldenlib.sh set it)
# re-executes itself once with it, so every run writes the same bytes.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable] + sys.argv)

# The date cloud-init's file headers carry ("# Created by cloud-init v. 26.2
# on DATE", util.time_rfc2822): fixed, so a golden does not change with the
# day it is regenerated (fix_time).
FIXED_RFC2822 = "Sun, 22 Nov 2026 08:36:48 +0000"


def fix_time(util):
    """Makes cloudinit.util (passed in) give FIXED_RFC2822 as the time."""
    util.time_rfc2822 = lambda: FIXED_RFC2822


# The repository root: scripts/goldens/lib/ -> ../../..
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

# os-release ID -> cloud-init distro class name.
CLASS = {"debian": "debian", "ubuntu": "ubuntu", "rhel": "rhel", "fedora": "fedora", "opensuse-leap": "suse",
         "sles": "suse", "alpine": "alpine", "arch": "arch", "photon": "photon"}


def write_stdout_to(path):
    """Points file descriptor 1 (and so print, json.dump(sys.stdout) and any
    child process) at path, truncated, as the shell's `> path` did."""
    sys.stdout.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.close(fd)


def args_or_defaults(defaults, out=None):
    """The generator's arguments: sys.argv[1:] when any were given (output
    stays on the caller's stdout); otherwise, from the repository root (the
    working directory becomes REPO), the area's defaults, with stdout
    redirected into `out` when the generator prints its golden. sys.argv is
    set to what was chosen, so the generator reads it as it always did."""
    if len(sys.argv) > 1:
        return sys.argv[1:]
    os.chdir(REPO)
    sys.argv[1:] = list(defaults)
    if out is not None:
        write_stdout_to(out)
    return sys.argv[1:]


def run_each(runs):
    """Without arguments, an area whose generator makes one golden per
    argument list runs itself once per (args, out) in runs, each in a fresh
    interpreter (the same sandbox and PYTHONPATH), stdout into out. Returns
    True when it did (the caller then stops), False when arguments were given."""
    if len(sys.argv) > 1:
        return False
    os.chdir(REPO)
    for args, out in runs:
        with open(out, "wb") as f:
            subprocess.run([sys.executable, os.path.abspath(sys.argv[0])] + list(args), stdout=f, check=True)
    return True


def fresh_dir(path):
    """Empties (creates) the output directory path, as an area that owns it
    does before writing it again."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


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
