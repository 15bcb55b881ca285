"""Run upstream cloud-init's Modules.run_section selection on each case of
pkg/modules/testdata/activation/cases.yaml and record, per stage list, the
lines cloud-init logs (INFO and above, as "FILE[LEVEL]: message": the
module list's resolution in modules.py and lifecycle.py's deprecations),
the recoverable_errors those lines make (cloudinit.log.loggers.LogExporter:
WARNING and up, by level name), the [name, frequency] it would run and,
when the list fails the stage, the exception's text (status.json's
errors; main.py's own "failed stage" line is not recorded), for
pkg/modules' TestModuleActivationUpstream.

  CLOUDINIT_SRC=/path/to/cloud-init scripts/upstream-cloudinit.sh --python \
      scripts/goldens/module-activation.py pkg/modules/testdata/activation/cases.yaml \
      > pkg/modules/testdata/activation/upstream.json

Nothing runs: Modules._run_modules is replaced by a recorder, the merged
config is the case itself and init.distro.name its system_info.distro.
Each stage list is a process of its own in cloud-init, so lifecycle's
once-per-process deprecation cache is emptied before each.
"""
import json
import logging
import os
import sys
import types

import yaml


from cloudinit import lifecycle
from cloudinit.config import modules
from cloudinit.log import loggers

SECTIONS = ("cloud_init_modules", "cloud_config_modules", "cloud_final_modules")


loggers.define_extra_loggers()  # DEPRECATED, as cloud-init's main does
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/activation/cases.yaml"], out="pkg/modules/testdata/activation/upstream.json")

with open(sys.argv[1]) as f:
    cases = yaml.safe_load(f)
log = logging.getLogger("cloudinit")
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
        cap = goldenlib.Capture()
        lifecycle.deprecate.log = set()
        log.addHandler(cap)
        out[section] = {"run": ran}
        try:
            m.run_section(section)
        except Exception as e:  # status_wrapper: the stage fails with str(e)
            out[section]["error"] = str(e)
        finally:
            log.removeHandler(cap)
        out[section].update({"log": cap.lines, "recoverable": cap.recoverable})
    result[name] = out
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
