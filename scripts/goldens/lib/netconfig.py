"""Render pkg/netconfig's golden corpus with upstream cloud-init.

Run through scripts/goldens/netconfig.sh (which runs it with
scripts/upstream-cloudinit.sh --python, in a fresh network namespace).

For every case directory under TESTDATA that holds an input (input.yaml,
network_data.json or interfaces.eni, tried in that order, as
pkg/netconfig/golden_test.go does) and for every renderer, this calls
upstream's own `devel net-convert` code (cloudinit.cmd.devel.net_convert:
get_parser + handle_args) with the distro the renderer is tested under and
the case's macs.txt as -m, and stores what upstream wrote in
<case>/cloud-init-26/<renderer>/:

  etc/...     the files, byte for byte
  MANIFEST    "<mode> <path>" per file
  LOG         upstream's log records of level WARNING and above, if any
  ERROR       the exception, when net-convert failed (no files then)

Each conversion runs in a forked child: net-convert mutates the distro's
class-level renderer configuration (it strips the netplan path's leading
slash), so conversions must not share one interpreter's state. Two
children run at a time.

Usage: scripts/goldens/lib/netconfig.py TESTDATA VERSION_FILE [case ...]
"""

import io
import logging
import os
import shutil
import sys
import tempfile
import traceback

# Renderer -> distro given to net-convert -D. Keep in step with
# upstreamDistro in pkg/netconfig/upstream_test.go.
RENDERERS = [
    ("eni", "debian"),
    ("netplan", "ubuntu"),
    ("networkd", "debian"),
    ("sysconfig", "rhel"),
    ("network-manager", "rhel"),
]

INPUTS = [
    ("input.yaml", "yaml"),
    ("network_data.json", "network_data.json"),
    ("interfaces.eni", "eni"),
]

OUT = "cloud-init-26"


def case_input(case_dir):
    for name, kind in INPUTS:
        p = os.path.join(case_dir, name)
        if os.path.isfile(p):
            return p, kind
    return None, None


def read_macs(case_dir):
    p = os.path.join(case_dir, "macs.txt")
    out = []
    if not os.path.isfile(p):
        return out
    with open(p) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.lines = []

    def emit(self, record):
        msg = record.getMessage()
        self.lines.append("%s %s: %s" % (record.levelname, record.name, msg))


def convert(path, kind, macs, renderer, distro, dest):
    """Run upstream net-convert into dest; return (log lines, error)."""
    from cloudinit.cmd.devel import net_convert

    # handle_args adds a stderr handler per call; we capture instead.
    net_convert.loggers.setup_basic_logging = lambda *a, **k: None
    cap = Capture()
    root = logging.getLogger()
    root.handlers[:] = [cap]
    root.setLevel(logging.WARNING)
    argv = ["-p", path, "-k", kind, "-d", dest, "-D", distro, "-O", renderer]
    for m in macs:
        argv += ["-m", m]
    args = net_convert.get_parser().parse_args(argv)
    saved = sys.stderr
    sys.stderr = io.StringIO()
    err = None
    try:
        net_convert.handle_args("net-convert", args)
    except Exception as e:  # noqa: BLE001 - recorded as the golden
        err = "%s: %s" % (type(e).__name__, e)
        if os.environ.get("NETCONFIG_GOLDENS_DEBUG"):
            traceback.print_exc(file=saved)
    finally:
        sys.stderr = saved
        args.network_data.close()
    return cap.lines, err


def store(case_dir, renderer, tmp, log, err):
    out = os.path.join(case_dir, OUT, renderer)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    manifest = []
    if err is None:
        for d, _, files in os.walk(tmp):
            for f in files:
                src = os.path.join(d, f)
                rel = os.path.relpath(src, tmp)
                dst = os.path.join(out, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o644)
                manifest.append(
                    "%04o %s" % (os.stat(src).st_mode & 0o7777, rel)
                )
    else:
        with open(os.path.join(out, "ERROR"), "w") as f:
            f.write(err.rstrip("\n") + "\n")
    manifest.sort(key=lambda l: l.split(" ", 1)[1])
    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("".join(l + "\n" for l in manifest))
    if log:
        with open(os.path.join(out, "LOG"), "w") as f:
            f.write("".join(l.rstrip("\n") + "\n" for l in log))


def job(case_dir, path, kind, macs, renderer, distro):
    tmp = tempfile.mkdtemp(prefix="netconfig-goldens-")
    try:
        log, err = convert(path, kind, macs, renderer, distro, tmp)
        store(case_dir, renderer, tmp, log, err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: scripts/goldens/lib/netconfig.py TESTDATA VERSION_FILE [case ...]")
    testdata, version_file = sys.argv[1], sys.argv[2]
    wanted = set(sys.argv[3:])
    # Import once in the parent: children are forked with it loaded.
    from cloudinit import version
    from cloudinit.cmd.devel import net_convert  # noqa: F401

    jobs = []
    for name in sorted(os.listdir(testdata)):
        case_dir = os.path.join(testdata, name)
        if not os.path.isdir(case_dir) or (wanted and name not in wanted):
            continue
        path, kind = case_input(case_dir)
        if path is None:
            continue
        macs = read_macs(case_dir)
        for renderer, distro in RENDERERS:
            jobs.append((case_dir, path, kind, macs, renderer, distro))

    running = {}
    failed = 0
    parallel = int(os.environ.get("NETCONFIG_GOLDENS_JOBS", "2"))
    for j in jobs:
        while len(running) >= parallel:
            pid, status = os.wait()
            if status != 0:
                failed += 1
                print("failed: %s %s" % running[pid], file=sys.stderr)
            running.pop(pid, None)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                job(*j)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 1
            os._exit(code)
        running[pid] = (os.path.basename(j[0]), j[4])
    while running:
        pid, status = os.wait()
        if status != 0:
            failed += 1
            print("failed: %s %s" % running[pid], file=sys.stderr)
        running.pop(pid, None)

    with open(version_file, "w") as f:
        f.write(
            "cloud-init %s (%s)\n"
            % (version.version_string(), os.environ.get("CLOUDINIT_REV", "?"))
        )
        # The generator's old path: the file stays byte-identical across its move.
        f.write(
            "written by scripts/netconfig-goldens.sh: devel net-convert per "
            "case and renderer, eni/networkd with -D debian, netplan -D "
            "ubuntu, sysconfig/network-manager -D rhel\n"
        )
    print(
        "%d conversions, %d failed to run (net-convert errors are goldens)"
        % (len(jobs), failed)
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
