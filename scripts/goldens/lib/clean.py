"""Run upstream `cloud-init clean ARGS` on a prepared tree and list what is left.

Used by scripts/goldens/cli.sh inside scripts/upstream-cloudinit.sh's
sandbox (tmpfs over /run, /var/lib/cloud, /var/log, /etc/cloud); only
options that touch those places are run (never --configs network/ssh_config/
fstab, --machine-id or --reboot, which would touch this machine's /etc).
Prints stdout, exit code, stderr, then every remaining path under
/var/lib/cloud and /var/log, sorted.
"""
import contextlib
import io
import os
import sys

from cloudinit.cmd import clean

args = clean.get_parser().parse_args(sys.argv[1:])
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    rc = clean.handle_clean_args("clean", args)
left = []
for top in ("/var/lib/cloud", "/var/log"):
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            left.append(os.path.join(d, n))
sys.stdout.write(out.getvalue() + "exit: %d\n" % rc + err.getvalue() + "--- left:\n")
sys.stdout.write("".join(p + "\n" for p in sorted(left)))
