#!/usr/bin/env python3
"""scripts/goldens/yaml11.py — PyYAML's reading of YAML documents, as cloud-init
loads them, written as typed JSON for pkg/yaml11's differential corpus.

    just goldens yaml11
        the scalar documents (--scalar-corpus), then the goldens of the corpus
        pkg/yaml11/testdata/corpus (the next form on it).
    CLOUDINIT_SRC=... scripts/upstream-cloudinit.sh --python scripts/goldens/yaml11.py pkg/yaml11/testdata/corpus
        writes <doc>.json beside every <doc>.yaml in the directory.
    scripts/goldens/yaml11.py --stdin
        reads a JSON list of documents (strings) on stdin, prints the list
        of their typed results (the live differential test uses this).
    scripts/goldens/yaml11.py --scalar-corpus DIR
        (re)writes the generated scalar documents scalars-*.yaml into DIR.

The loader is yaml.safe_load, which cloud-init 26.x's util.load_yaml (user
data cloud-config parts, cloud.cfg, meta-data, network-config) and
`schema` use; when cloudinit is importable the script checks that its
load_yaml still calls yaml.safe_load and records the version.

Typed JSON: null, true/false and strings are themselves; int {"int":
"420"}; float {"float": repr}; datetime {"timestamp": isoformat}; date
{"date": isoformat}; bytes {"binary": base64}; tuple {"tuple": [...]};
set {"set": [...]}; dict {"map": [[key, value], ...]} in dict order;
a failure {"error": "<exception type>: <first line>"}.
"""
import base64
import datetime
import glob
import inspect
import json
import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

# The differential corpus `just goldens yaml11` regenerates.
CORPUS = "pkg/yaml11/testdata/corpus"


def loader_version():
    try:
        from cloudinit import util, version
    except ImportError:
        return "PyYAML %s (cloudinit not importable)" % yaml.__version__
    src = inspect.getsource(util.load_yaml)
    if "yaml.safe_load(" not in src:
        sys.exit("cloudinit.util.load_yaml no longer calls yaml.safe_load; update this script")
    return "cloud-init %s, PyYAML %s" % (version.version_string(), yaml.__version__)


def enc(v, seen=()):
    if id(v) in seen:
        raise RecursionError("recursive structure")
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, datetime.datetime):
        return {"timestamp": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"date": v.isoformat()}
    if isinstance(v, bytes):
        return {"binary": base64.b64encode(v).decode()}
    seen = seen + (id(v),)
    if isinstance(v, tuple):
        return {"tuple": [enc(e, seen) for e in v]}
    if isinstance(v, list):
        return [enc(e, seen) for e in v]
    if isinstance(v, (set, frozenset)):
        # sorted: Python's set order changes from run to run
        return {"set": sorted((enc(e, seen) for e in v), key=lambda x: json.dumps(x, sort_keys=True))}
    if isinstance(v, dict):
        return {"map": [[enc(k, seen), enc(e, seen)] for k, e in v.items()]}
    raise TypeError("unexpected type %s" % type(v).__name__)


def typed(text):
    try:
        return enc(yaml.safe_load(text))
    except Exception as e:  # cloud-init fails on every one of these
        first = (str(e).splitlines() or [""])[0]
        return {"error": "%s: %s" % (type(e).__name__, first)}


SCALARS = {
    "bool": ["yes", "Yes", "YES", "yEs", "no", "No", "NO", "nO", "true", "True", "TRUE", "tRUE",
             "false", "False", "FALSE", "on", "On", "ON", "oN", "off", "Off", "OFF", "y", "Y", "n", "N",
             "enable", "disabled", "~yes", "yes!", "'yes'", '"no"', "!!str yes", "!!bool yes",
             "!!bool 'on'", "!!bool maybe", "! yes", "! 'yes'"],
    "int": ["0", "-0", "+0", "7", "-7", "+7", "00", "0644", "0755", "01777", "0o644", "0x1F", "0x1f",
            "-0x1f", "0b1010", "-0b11", "0b", "0x", "0b_", "0x_", "08", "09", "0_", "1_000",
            "1__0", "1_", "_1", "1:30", "-1:30", "1:30:45", "1:60", "1:5", "01:30", "0:30", "1:_",
            "190:20:30", "12345678901234567890", "-99999999999999999999999", "0x_1_f",
            "!!int '12'", "!!int 0o17", "!!int 1.5", "!!int ''", "!!int abc", "!!int '0b101'",
            "!!int ' 42 '", "!!int 1:30", "+1:30", "1:30.5:1"],
    "float": ["1.5", "-1.5", "+1.5", "1.", ".5", "-.5", "1.5e3", "1.5e+3", "1.5E-3", "1.0e+3",
              "1e3", "1e+3", "1_000.5", "1._5", "._5", ".", "-.", "1.2.3", ".inf", "-.inf", "+.inf",
              ".Inf", ".INF", ".iNf", ".nan", ".NaN", ".NAN", "-.nan", "nan", "inf", "1:30.5",
              "190:20:30.15", "-1:30.5", "1e400", "1.0e+400", "1.0e-400", "0.1", "0.0001", "0.00001",
              "1.0e+15", "1.0e+16", "123456789012345678.0", "3.14159265358979323846",
              "!!float 1", "!!float '2'", "!!float abc", "!!float inf", "!!float -Infinity",
              "!!float ' 1.5 '", "!!float 1_0.5", "!!float 0x10", "6.8523015e+5", "685.230_15e+03"],
    "null": ["~", "null", "Null", "NULL", "nULL", "", "!!null foo", "!!null ''", "'~'", "None",
             "none", "'null'", "!!str", "!!str ~"],
    "timestamp": ["2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43.10+05:30",
                  "2001-12-14 21:59:43.10 -5", "2001-12-15 2:59:43.10", "2002-12-14T02:59:43.1Z",
                  "2001-12-14T21:59:43Z", "2001-12-14T21:59:43.123456789Z", "2001-1-1",
                  "2001-1-1 1:02:03", "2001-02-29", "2000-02-29", "2001-13-01", "2001-12-32",
                  "2001-12-14T25:00:00Z", "2001-12-14T21:59:43 +24", "2001-12-14T21:59:43 -00:00",
                  "2001-12-14T21:59:43.Z", "!!timestamp 2001-12-14", "!!timestamp '2001-12-14 1:02:03'",
                  "'2001-12-14'", "0000-01-01", "9999-12-31T23:59:59.999999+23:59"],
    "string": ["hello", "'hello'", '"hello"', "hello world", "a: b", "'a: b'", "foo #bar", "#x",
               "'#x'", "0xZZ", "12e", "1_a", "+", "-", "-a", "0o", "'0644'", '"0644"', "!!str 0644",
               "!!str 1.5", "!!str true", "'yes'", "\"\\u00e9\"", "'it''s'", '"tab\\there"',
               "café", "日本", "'<<'", "'='", "ON_OFF", "true_value", "1.5.6", "1:2:x", "12:34:56:78:90:ab",
               "52:54:00:12:34:56", "'52:54:00:12:34:56'", "10.0.0.1", "10.0.0.1/24", "::1",
               "fe80::1", "2001:db8::1", "'2001:db8::1'", "/dev/sda1", "C:\\\\x", "http://a/b?c=d",
               "v1.2", "1.2.3.4:80", "%x", "@x", "`x`", "!!binary aGVsbG8=", "!!binary 'aGVs bG8='",
               "!!binary aGVsbG8", "!!binary a", "!!binary '=='", "!!binary ''", "!!binary 'aGk=aGk='"],
    "tags": ["!!python/object:os.system x", "!!python/name:os.system", "!foo bar", "!<!bar> baz",
             "!!str [a]", "!!seq a", "!!map a", "!!set a", "!!omap a", "!<tag:yaml.org,2002:str> 12",
             "!<tag:yaml.org,2002:int> '12'", "!!merge x", "<<", "=", "!!value x", "!!yaml x"],
}


def write_scalar_corpus(d):
    for fam, vals in SCALARS.items():
        # one document per value as a mapping value, one as a list item, one
        # as a key: an error in one case never hides another
        for i, v in enumerate(vals):
            for form, text in (("val", "k: %s\n" % v), ("seq", "- %s\n" % v), ("key", "%s: v\n" % v)):
                if form == "key" and (v == "" or v.startswith("!!") or v.startswith("!")):
                    continue
                with open(os.path.join(d, "scalars-%s-%03d-%s.yaml" % (fam, i, form)), "w") as f:
                    f.write(text)


def main(argv):
    if not argv:
        # just goldens yaml11: the generated scalar documents, then every document's golden.
        os.chdir(goldenlib.REPO)
        write_scalar_corpus(CORPUS)
        argv = [CORPUS]
    if argv[:1] == ["--stdin"]:
        docs = json.load(sys.stdin)
        json.dump([typed(t) for t in docs], sys.stdout)
        return
    if argv[:1] == ["--scalar-corpus"]:
        write_scalar_corpus(argv[1])
        return
    if len(argv) != 1:
        sys.exit(__doc__)
    print("goldens from", loader_version(), file=sys.stderr)
    n = 0
    for path in sorted(glob.glob(os.path.join(argv[0], "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out = json.dumps(typed(text), indent=1, ensure_ascii=False) + "\n"
        with open(path[: -len(".yaml")] + ".json", "w", encoding="utf-8") as f:
            f.write(out)
        n += 1
    print("wrote %d goldens" % n, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
