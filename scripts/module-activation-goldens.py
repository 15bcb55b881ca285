"""Run upstream cloud-init's Modules.run_section selection on each case of
pkg/modules/testdata/activation/cases.yaml and record, per stage list, the
lines cloudinit.config.modules logs (INFO and above) and the modules it
would run, for pkg/modules' TestModuleActivationUpstream.

  CLOUDINIT_SRC=/path/to/cloud-init scripts/upstream-cloudinit.sh --python \
      scripts/module-activation-goldens.py pkg/modules/testdata/activation/cases.yaml \
      > pkg/modules/testdata/activation/upstream.json

Nothing runs: Modules._run_modules is replaced by a recorder, the merged
config is the case itself and init.distro.name its system_info.distro.
"""
import json
import logging
import sys
import types

import yaml

from cloudinit.config import modules

SECTIONS = ("cloud_init_modules", "cloud_config_modules", "cloud_final_modules")


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append("%s: %s" % (record.levelname, record.getMessage()))


with open(sys.argv[1]) as f:
    cases = yaml.safe_load(f)
log = logging.getLogger("cloudinit.config.modules")
log.setLevel(logging.DEBUG)
result = {}
for name in sorted(cases):
    cfg = cases[name]
    init = types.SimpleNamespace(distro=types.SimpleNamespace(name=cfg["system_info"]["distro"]))
    out = {}
    for section in SECTIONS:
        if section not in cfg:
            continue
        m = modules.Modules(init)
        m._cached_cfg = cfg
        ran = []
        m._run_modules = lambda mostly, ran=ran: ran.extend([d[1], d[2]] for d in mostly) or (ran, [])
        cap = Capture()
        log.addHandler(cap)
        try:
            m.run_section(section)
        finally:
            log.removeHandler(cap)
        out[section] = {"log": cap.lines, "run": ran}
    result[name] = out
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
