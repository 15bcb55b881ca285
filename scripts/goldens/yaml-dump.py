#!/usr/bin/env python3
"""Write pkg/yaml11/testdata/dump-pyyaml.json: what PyYAML's yaml.dump
writes for strings at the emitter's edges (quoting, folding at the width,
escapes, multi-byte runes, breaks other than \\n), with the default options
and with cloud-init's safeyaml.dumps options. TestDumpPyYAML checks
yaml11.Dump/DumpTo against it.

    just goldens yaml-dump
    /usr/bin/python3 scripts/goldens/yaml-dump.py   (the same: Debian's python3-yaml)
"""

import json
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

CASES = [
    "", " ", "a", "yes", "0123", "1.5", "-", "- a", "? x", ":", "a: b", "a #b", "#c", "---", "...x",
    "'", "a'b", "'quoted'", "\"", "\\", "tab\there", "trail ", " lead", "two  spaces", "line\n", "\nlead",
    "a\nb", "a\n\nb", "a \nb", "a\n b", "é", "aé", "éa", "\u2028", "a\u2028b", "\x85", "\ufeff", "😀", "a😀b",
    "\x00\x01\x7f", "word " * 40, "x" * 200, "é " * 60, "ab'cd " * 30, "a\"b\\c " * 30,
    "line of text\n" * 20, "é\u2028\x7f" * 40, "  " * 50 + "x", "x" + " " * 100,
    "a " * 39 + "é" + " b" * 40, "null", "~", "=", "<<", "2001-12-14", "0x1F", "1_000", "+.inf",
    "a" * 79 + " " + "b" * 10, "a " * 45, ("é" * 39 + " ") * 3, "\t lead tab", "x\r\ny",
]


def main():
    out = []
    for s in CASES:
        v = {s: s, "k": [s, {"n": s}]}
        out.append({
            "s": s,
            "default": yaml.dump(v, default_flow_style=False),
            "safe": yaml.dump(v, line_break="\n", indent=4, explicit_start=True, explicit_end=True,
                              default_flow_style=False, Dumper=yaml.dumper.SafeDumper),
        })
    path = os.path.join(goldenlib.REPO, "pkg", "yaml11", "testdata", "dump-pyyaml.json")
    with open(path, "w") as f:
        json.dump({"pyyaml": yaml.__version__, "cases": out}, f, indent=1, ensure_ascii=True)
        f.write("\n")


if __name__ == "__main__":
    main()
