"""Render upstream cloud-init's resolv.conf and systemd.resolved.conf
templates through cc_resolv_conf.generate_resolv_conf (flags split from
options as upstream does) for the resolv_conf cases given on the command
line, for pkg/modules' TestResolvConfUpstream
(scripts/resolv-conf-goldens.sh runs this through
scripts/upstream-cloudinit.sh --python).

  resolv-conf-goldens.py CLOUDINIT_SRC OUTDIR CASE.yaml...

Each CASE.yaml is a cloud-config; OUTDIR/<case>/<template name> is written.
"""
import copy
import os
import sys

import yaml

from cloudinit import version
from cloudinit.config import cc_resolv_conf

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
