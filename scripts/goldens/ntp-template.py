"""Render upstream cloud-init's NTP client templates (templates/chrony.conf.*,
ntp.conf.*, timesyncd.conf) with upstream's own templater and fixed
parameters, one file per template, for pkg/modules' TestNTPTemplatesUpstream,
which renders cloudroot's own templates (templates/ntp, its own wording)
with the same parameters and requires the same configuration lines.

  just goldens ntp-template
      (OUTDIR pkg/modules/ntp/testdata/ntp-upstream, emptied first)
  CLOUDINIT_SRC=... scripts/upstream-cloudinit.sh --python \
      scripts/goldens/ntp-template.py CLOUDINIT_SRC OUTDIR
"""
import os
import sys

from cloudinit import templater, version

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

if len(sys.argv) == 1:
    goldenlib.args_or_defaults([os.environ["CLOUDINIT_SRC"], "pkg/modules/ntp/testdata/ntp-upstream"])
    goldenlib.fresh_dir(sys.argv[2])

SRC, OUT = sys.argv[1:3]
PARAMS = {
    "servers": ["ntp1.example.com", "192.0.2.1"],
    "pools": ["0.example.pool.ntp.org", "1.example.pool.ntp.org"],
    "peers": ["peer1.example.com"],
    "allow": ["192.0.2.0/24"],
}
tdir = os.path.join(SRC, "templates")
os.makedirs(OUT, exist_ok=True)
for fn in sorted(os.listdir(tdir)):
    if not fn.endswith(".tmpl"):
        continue
    if not (fn.startswith("chrony.conf.") or fn.startswith("ntp.conf.") or fn == "timesyncd.conf.tmpl"):
        continue
    with open(os.path.join(tdir, fn)) as f:
        out = templater.render_string(f.read(), PARAMS)
    with open(os.path.join(OUT, fn[: -len(".tmpl")]), "w") as f:
        f.write(out)
with open(os.path.join(OUT, "VERSION"), "w") as f:
    f.write(version.version_string() + "\n")
