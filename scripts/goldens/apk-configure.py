"""Run upstream cc_apk_configure on every pkg/modules/pkgmgr/testdata/apk case.

Run through scripts/upstream-cloudinit.sh --python (see docs/compatibility.md):

    scripts/goldens/apk-configure.py <cases dir> <templates/apk/repositories.tmpl>

Upstream's handle() renders cloudroot's template (in place of its built-in
one, whose comments differ) with its own parameters and templater; the
/etc/apk/repositories it writes, redirected into a temporary directory,
is saved as <case>/upstream.txt.
"""

import glob
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import util
from cloudinit.config import cc_apk_configure as cc


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/pkgmgr/testdata/apk", "templates/apk/repositories.tmpl"])


def main():
    with open(sys.argv[2]) as fh:
        cc.REPOSITORIES_TEMPLATE = fh.read()
    orig_write = util.write_file
    for ud in sorted(glob.glob(os.path.join(sys.argv[1], "*", "user-data.yaml"))):
        d = tempfile.mkdtemp(prefix="apk-golden-")
        try:
            target = os.path.join(d, "repositories")

            def write(fn, *a, **k):
                if fn == "/etc/apk/repositories":
                    fn = target
                return orig_write(fn, *a, **k)

            util.write_file = write
            try:
                with open(ud) as fh:
                    cc.handle("apk_configure", yaml.safe_load(fh), None, [])
            finally:
                util.write_file = orig_write
            out = ""
            if os.path.exists(target):
                with open(target) as fh:
                    out = fh.read()
            with open(os.path.join(os.path.dirname(ud), "upstream.txt"), "w") as fh:
                fh.write(out)
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    main()
