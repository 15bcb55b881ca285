"""Generate the wrong-type corpus for cloudroot's schema and record how
upstream cloud-init 26.x's schema judges each document.

    CLOUDINIT_SRC=<checkout> scripts/upstream-cloudinit.sh --python \
        scripts/schema-corpus-goldens.py > pkg/cloudcfg/testdata/schema-corpus/upstream.json

For every property of upstream's cloud-config schema (top-level keys, and
the keys of each top-level object, one level down), the first value of
CANDIDATES that upstream rejects is used as a document {key: value} (or
{key: {sub: value}}); a property that accepts every candidate is left
out. Each entry records the document, upstream's verdict and the sorted
set of error paths (validate_cloudconfig_schema, strict). TestSchemaCorpus
(pkg/cloudcfg/schema) requires cloudroot to reject the same documents at
the same paths. Deterministic: no randomness, schema key order.
"""
import json
import sys

from cloudinit.config.schema import (
    SchemaValidationError,
    get_schema,
    validate_cloudconfig_schema,
)

CANDIDATES = [12345, "a-string", ["a", "list"], {"k": "v"}, True, None, 1.5]

schema = get_schema()


def judge(doc):
    try:
        validate_cloudconfig_schema(doc, schema, strict=True, log_details=False)
    except SchemaValidationError as e:
        paths = sorted({p.path for p in e.schema_errors})
        return bool(e.schema_errors), paths
    return False, []


def resolve(node):
    ref = node.get("$ref", "") if isinstance(node, dict) else ""
    if ref.startswith("#/$defs/"):
        return schema["$defs"][ref[len("#/$defs/"):]]
    return node


def top_properties():
    props = {}
    for sub in schema.get("allOf", []):
        d = resolve(sub)
        props.update(d.get("properties", {}))
    # The top-level "properties" repeat module keys (often as {} or a
    # deprecation note); a module's own definition wins.
    for k, v in schema.get("properties", {}).items():
        props.setdefault(k, v)
    return props


out = []


def add(key, wrap):
    for cand in CANDIDATES:
        doc = wrap(cand)
        invalid, paths = judge(doc)
        if invalid:
            out.append({"key": key, "doc": doc, "invalid": True, "paths": paths})
            return


for name, node in top_properties().items():
    add(name, lambda v, n=name: {n: v})
    node = resolve(node)
    for sname in (node.get("properties") or {}):
        add(name + "." + sname, lambda v, n=name, s=sname: {n: {s: v}})

json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
