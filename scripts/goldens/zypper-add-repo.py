"""Run upstream cc_zypper_add_repo on every pkg/modules/pkgmgr/testdata/zypper case.

Run through scripts/upstream-cloudinit.sh --python (see docs/compatibility.md):

    scripts/goldens/zypper-add-repo.py <cases dir>

For each <case>/user-data.yaml, upstream's handle() runs with its paths
redirected into a temporary root holding /etc/zypp/zypp.conf and
/etc/zypp/repos.d/exists.repo; <case>/upstream.txt lists the files under
/etc/zypp afterwards.
"""

import glob
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import util
from cloudinit.config import cc_zypper_add_repo as cc

ZYPP_CONF = "## zypp.conf\n[main]\n"


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/pkgmgr/testdata/zypper"])


def main():
    orig_write, orig_load, orig_exists = util.write_file, util.load_text_file, os.path.exists
    for ud in sorted(glob.glob(os.path.join(sys.argv[1], "*", "user-data.yaml"))):
        root = tempfile.mkdtemp(prefix="zypper-golden-")
        try:
            os.makedirs(os.path.join(root, "etc/zypp/repos.d"))
            with open(os.path.join(root, "etc/zypp/zypp.conf"), "w") as fh:
                fh.write(ZYPP_CONF)
            with open(os.path.join(root, "etc/zypp/repos.d/exists.repo"), "w") as fh:
                fh.write("[exists]\n")

            def r(p):
                return p if p.startswith(root) else root + p

            util.write_file = lambda fn, *a, **k: orig_write(r(fn), *a, **k)
            util.load_text_file = lambda fn, *a, **k: orig_load(r(fn), *a, **k)
            cc.os.path.exists = lambda p: orig_exists(r(p))
            try:
                with open(ud) as fh:
                    cfg = yaml.safe_load(fh)
                cc.handle("zypper_add_repo", cfg, None, [])
            finally:
                util.write_file, util.load_text_file = orig_write, orig_load
                cc.os.path.exists = orig_exists
            out = []
            for d, _dirs, names in sorted(os.walk(os.path.join(root, "etc/zypp"))):
                for n in sorted(names):
                    f = os.path.join(d, n)
                    with open(f) as fh:
                        body = fh.read()
                    out.append("--- /%s\n%s" % (os.path.relpath(f, root), body))
                    if body and not body.endswith("\n"):
                        out.append("\n[no newline at end]\n")
            with open(os.path.join(os.path.dirname(ud), "upstream.txt"), "w") as fh:
                fh.write("".join(out))
        finally:
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
