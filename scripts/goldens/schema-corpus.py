"""Generate the wrong-type corpus for cloudroot's schema and record how
upstream cloud-init 26.x's schema judges each document.

    just goldens schema-corpus   (writes pkg/cloudcfg/testdata/schema-corpus/upstream.json)

For every property of upstream's cloud-config schema, down to three levels
(top-level keys, the keys of their objects, the keys of the objects in
those, through $refs and into the objects of lists: users[0].sudo), the
first value of CANDIDATES that upstream rejects is used as a document
({key: value}, {key: {sub: value}}, {key: [{sub: value}]}...); a property
that accepts every candidate is left out. Each entry records the document, upstream's verdict and the sorted
set of error paths (validate_cloudconfig_schema, strict). TestSchemaCorpus
(pkg/cloudcfg/schema) requires cloudroot to reject the same documents at
the same paths. Deterministic: no randomness, schema key order.
"""
import json
import os
import sys

from cloudinit.config.schema import (
    SchemaValidationError,
    get_schema,
    validate_cloudconfig_schema,
)

CANDIDATES = [12345, "a-string", ["a", "list"], {"k": "v"}, True, None, 1.5]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults([], out="pkg/cloudcfg/testdata/schema-corpus/upstream.json")
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


def object_schema(node):
    """The properties of node (an object schema, or a list of them)."""
    node = resolve(node)
    if not isinstance(node, dict):
        return None, False
    if node.get("properties"):
        return node["properties"], False
    items = resolve(node.get("items", {}))
    if isinstance(items, dict) and items.get("properties"):
        return items["properties"], True
    return None, False


def visit(key, node, wrap, depth):
    add(key, wrap)
    if depth >= 3:
        return
    props, in_list = object_schema(node)
    for sname, snode in (props or {}).items():
        if in_list:
            inner = lambda v, s=sname, w=wrap: w([{s: v}])
        else:
            inner = lambda v, s=sname, w=wrap: w({s: v})
        visit(key + "." + sname, snode, inner, depth + 1)


for name, node in top_properties().items():
    visit(name, node, lambda v, n=name: {n: v}, 1)

json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
