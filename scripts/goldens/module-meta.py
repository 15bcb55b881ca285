"""Record every upstream config module's `meta` (id, frequency, distros,
activate_by_schema_keys) for pkg/modules' TestModuleMetaUpstream.

  just goldens module-meta   (writes pkg/modules/testdata/module-meta-upstream.json)

Only imports cloudinit.config.cc_* and reads their `meta`; nothing runs.
Output: {"version": upstream's version, "modules": {name: meta...}} where
name is the file's name without "cc_" (what the stage lists use),
`distros` is the list as declared (["all"] for every distro) and
`activate_by_schema_keys` is [] when the module always runs.
"""
import importlib
import json
import os
import pkgutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults([], out="pkg/modules/testdata/module-meta-upstream.json")

from cloudinit import config, version

mods = {}
for info in pkgutil.iter_modules(config.__path__):
    if not info.name.startswith("cc_"):
        continue
    mod = importlib.import_module("cloudinit.config." + info.name)
    meta = mod.meta
    mods[info.name[3:]] = {
        "id": meta["id"],
        "frequency": meta["frequency"],
        "distros": list(meta["distros"]),
        "activate_by_schema_keys": list(meta.get("activate_by_schema_keys", [])),
    }
# One module a line, so a new upstream release diffs module by module.
lines = ["  %s: %s" % (json.dumps(n), json.dumps(mods[n], sort_keys=True)) for n in sorted(mods)]
sys.stdout.write('{\n "version": %s,\n "modules": {\n%s\n }\n}\n' % (json.dumps(version.version_string()), ",\n".join(lines)))
