"""Run upstream cloud-init's `cloud-init single` module step
(Modules.run_single and _run_modules, with main_single's frequency names
and closing warnings) on each case of pkg/modules/testdata/single/cases.yaml
and record what it logs, the recoverable errors those lines would be, the
module it runs under which name and frequency, whether the module's handler
was called, and the semaphores left, for pkg/modules' TestSingleUpstream.

  CLOUDINIT_SRC=/path/to/cloud-init scripts/upstream-cloudinit.sh --python \
      scripts/goldens/module-single.py pkg/modules/testdata/single/cases.yaml \
      > pkg/modules/testdata/single/upstream.json

A case is {config: merged config, name: --name, frequency: --frequency
(instance, always, once; optional), runs: how many times in a row (1)}.
One more case, "every-activated-module-without-its-keys", is made here: each
module whose meta has activate_by_schema_keys, run by its name with a
config that has none of them (run_section would skip it; run_single does
not).

The handlers really run, against a stand-in Cloud whose run is
cloud-init's helpers.Runners over semaphore directories in a temporary
directory and whose distro has only name (debian) and hosts_fn: a handler
that touches anything else of them, runs a command (subp.subp: its argv is
recorded under "commands") or writes, moves or removes a file outside that
directory fails with the reason recorded, so nothing reaches this machine.
subp.which finds nothing. The path of a failed module's file is cut from
its log line.
"""
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import types

import yaml


from cloudinit import helpers, importer, lifecycle, subp, util
from cloudinit import config as ccfg
from cloudinit.cmd.main import FREQ_SHORT_NAMES
from cloudinit.config import modules
from cloudinit.log import loggers


class Paths:
    def __init__(self, d):
        self.d = d

    def get_ipath(self, name):
        return os.path.join(self.d, "instances", "iid-test", name)

    def get_cpath(self, name):
        return os.path.join(self.d, name)


SANDBOX = tempfile.mkdtemp(prefix="module-single-goldens.")


def guard(fn, what):
    def guarded(path, *a, **k):
        if not os.path.abspath(str(path)).startswith(SANDBOX + "/"):
            raise PermissionError("golden sandbox: %s %s" % (what, path))
        return fn(path, *a, **k)

    return guarded


COMMANDS = []


def no_subp(*a, **k):
    argv = a[0] if a else k.get("args")
    COMMANDS.append(list(argv) if isinstance(argv, (list, tuple)) else argv)
    raise PermissionError("golden sandbox: subp %s" % (argv,))


class Distro:
    name = "debian"
    hosts_fn = "/etc/hosts"

    def __getattr__(self, attr):
        raise PermissionError("golden sandbox: distro.%s" % attr)


REAL = (os.unlink, os.remove, os.rename, shutil.move)
util.write_file = guard(util.write_file, "write_file")
util.ensure_dir = guard(util.ensure_dir, "ensure_dir")
util.del_file = guard(util.del_file, "del_file")
os.unlink = guard(os.unlink, "unlink")
os.remove = guard(os.remove, "remove")
os.rename = guard(os.rename, "rename")
shutil.move = guard(shutil.move, "move")
subp.subp = no_subp
# No command exists in the sandbox (as in the Go test's empty target).
subp.which = lambda *a, **k: None


def run_case(case):
    sem_dir = tempfile.mkdtemp(dir=SANDBOX)
    runners = helpers.Runners(Paths(sem_dir))
    called = []

    class Cloud:
        distro = Distro()

        def run(self, name, functor, args, freq=None, clear_on_fail=False):
            if name.startswith("config-"):
                # The module's handler, as _run_modules passes it.
                def handler(**kw):
                    called.append(name)
                    return functor(**kw)

                return runners.run(name, handler, args, freq, clear_on_fail)
            return runners.run(name, functor, args, freq, clear_on_fail)

        def __getattr__(self, attr):
            raise PermissionError("golden sandbox: cloud.%s" % attr)

    cfg = case["config"]
    init = types.SimpleNamespace(
        distro=types.SimpleNamespace(name=cfg.get("system_info", {}).get("distro")),
        cloudify=lambda: Cloud(),
    )
    freq = case.get("frequency")
    if freq:
        freq = FREQ_SHORT_NAMES.get(freq)
    log = logging.getLogger("cloudinit")
    out = []
    # main_single is one process per run: lifecycle's cache is emptied.
    for _ in range(case.get("runs", 1)):
        lifecycle.deprecate.log = set()
        del called[:]
        del COMMANDS[:]
        cap = goldenlib.Capture()
        log.addHandler(cap)
        try:
            m = modules.Modules(init)
            m._cached_cfg = cfg
            which_ran, failures = m.run_single(case["name"], None, freq)
        finally:
            log.removeHandler(cap)
        # main_single's verdict, logged by main.py.
        verdict = None
        if failures:
            verdict, code = "Ran %s but it failed!" % case["name"], 1
        elif not which_ran:
            verdict, code = "Did not run %s, does it exist?" % case["name"], 1
        else:
            code = 0
        if verdict:
            cap.lines.append("main.py[WARNING]: " + verdict)
            cap.recoverable.setdefault("WARNING", []).append(verdict)
        sems = []
        for root, _dirs, files in os.walk(sem_dir):
            for f in files:
                sems.append(os.path.relpath(os.path.join(root, f), sem_dir))
        out.append(
            {
                "log": [re.sub(r" from '[^']*'>", ">", l) for l in cap.lines],
                "recoverable": {
                    k: [re.sub(r" from '[^']*'>", ">", m) for m in v] for k, v in cap.recoverable.items()
                },
                "which_ran": which_ran,
                "failures": {n: str(e) for n, e in failures},
                "called": bool(called),
                "commands": list(COMMANDS),
                "sems": sorted(sems),
                "exit": code,
            }
        )
    return out


loggers.define_extra_loggers()
logging.getLogger("cloudinit").setLevel(logging.DEBUG)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/single/cases.yaml"], out="pkg/modules/testdata/single/upstream.json")

with open(sys.argv[1]) as f:
    cases = yaml.safe_load(f)
result = {name: run_case(cases[name]) for name in sorted(cases)}

every = {}
for mod_name in sorted(
    n[:-3] for n in os.listdir(os.path.dirname(ccfg.__file__)) if n.startswith("cc_") and n.endswith(".py")
):
    mod = importer.import_module("cloudinit.config." + mod_name)
    if not mod.meta.get("activate_by_schema_keys"):
        continue
    name = mod_name[3:]
    every[name] = run_case({"config": {"system_info": {"distro": "debian"}}, "name": name})[0]
result["every-activated-module-without-its-keys"] = every
os.unlink, os.remove, os.rename, shutil.move = REAL
shutil.rmtree(SANDBOX)
json.dump(result, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
