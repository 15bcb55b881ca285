"""Render upstream cloud-init's resolv.conf and systemd.resolved.conf
templates through cc_resolv_conf.generate_resolv_conf (flags split from
options as upstream does) for the resolv_conf cases given on the command
line, for pkg/modules' TestResolvConfUpstream, which renders cloudroot's
templates (templates/resolv, its own header wording) and requires the same
text below the header comment.

  just goldens resolv-conf
      (the cases pkg/modules/testdata/resolv-upstream/cases/*.yaml into
      OUTDIR pkg/modules/testdata/resolv-upstream/out, emptied first)
  CLOUDINIT_SRC=... scripts/upstream-cloudinit.sh --python \
      scripts/goldens/resolv-conf.py CLOUDINIT_SRC OUTDIR CASE.yaml...

Each CASE.yaml is a cloud-config; OUTDIR/<case>/<template name> is written.
"""
import copy
import glob
import os
import sys

import yaml

from cloudinit import version
from cloudinit.config import cc_resolv_conf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

if len(sys.argv) == 1:
    DIR = "pkg/modules/testdata/resolv-upstream"
    os.chdir(goldenlib.REPO)
    goldenlib.args_or_defaults([os.environ["CLOUDINIT_SRC"], DIR + "/out"] + sorted(glob.glob(DIR + "/cases/*.yaml")))
    goldenlib.fresh_dir(sys.argv[2])

SRC, OUT = sys.argv[1:3]
for case in sys.argv[3:]:
    with open(case) as f:
        cfg = yaml.safe_load(f)
    name = os.path.splitext(os.path.basename(case))[0]
    os.makedirs(os.path.join(OUT, name), exist_ok=True)
    for tmpl in ("resolv.conf", "systemd.resolved.conf"):
        params = copy.deepcopy(cfg["resolv_conf"])  # generate_resolv_conf edits it
        cc_resolv_conf.generate_resolv_conf(
            os.path.join(SRC, "templates", tmpl + ".tmpl"), params, os.path.join(OUT, name, tmpl)
        )
with open(os.path.join(OUT, "VERSION"), "w") as f:
    f.write(version.version_string() + "\n")
