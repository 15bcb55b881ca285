"""Run upstream cc_yum_add_repo on every pkg/modules/pkgmgr/testdata/yum case.

Run through scripts/upstream-cloudinit.sh --python (see docs/compatibility.md):

    scripts/goldens/yum-add-repo.py <cases dir>

For each <case>/user-data.yaml, upstream's handle() writes into a temporary
yum_repo_dir (holding an exists.repo already, to show the skip), with the
clock fixed at 2026-11-22 08:36:48 UTC; <case>/upstream.txt lists the
files it wrote.
"""

import glob
import os
import shutil
import sys
import tempfile

import yaml

from cloudinit import util
from cloudinit.config import cc_yum_add_repo as cc


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/pkgmgr/testdata/yum"])


def main():
    goldenlib.fix_time(util)
    for ud in sorted(glob.glob(os.path.join(sys.argv[1], "*", "user-data.yaml"))):
        d = tempfile.mkdtemp(prefix="yum-golden-")
        try:
            with open(os.path.join(d, "exists.repo"), "w") as fh:
                fh.write("[exists]\n")
            with open(ud) as fh:
                cfg = yaml.safe_load(fh)
            cfg["yum_repo_dir"] = d
            cc.handle("yum_add_repo", cfg, None, [])
            out = []
            for f in sorted(os.listdir(d)):
                with open(os.path.join(d, f)) as fh:
                    out.append("--- %s\n%s" % (f, fh.read()))
            with open(os.path.join(os.path.dirname(ud), "upstream.txt"), "w") as fh:
                fh.write("".join(out))
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    main()
