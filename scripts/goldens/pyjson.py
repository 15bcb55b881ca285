#!/usr/bin/env python3
"""Print the rows of pyval.TestJSONDumps's tables: what CPython's
json.dumps writes for JSON documents (decoded by json.loads, so key order
and number types are Python's) with the options cloud-init uses, and for a
few values JSON text cannot hold (NaN, Infinity, Go ints and floats).
Paste the output into pkg/internal/pyval/json_test.go.

    /usr/bin/python3 scripts/goldens/pyjson.py
"""

import json

DOCS = [
    'null', 'true', 'false', '0', '-0', '12', '-7', '123456789012345678901234567890',
    '1.5', '3.0', '1e16', '1.5e-5', '0.0001', '123456789012345.6', '-2.5', '1e999', '-1e999',
    '1E2', '0.1', '2.5e-300',
    '""', '"a\\"b\\\\c"', '"tab\\tnl\\ncr\\r\\b\\f\\u0001\\u001f\\u007f"', '"é日本😀"', '"</script>"',
    '[]', '{}', '[[]]', '[{}]', '{"a": {}}', '{"a": []}',
    '[1, "two", null, true, 3.25]',
    '{"b": 1, "a": [1, {"d": null, "c": "x"}], "é": {"z": 1, "y": [[], {}]}}',
    '{"z": {"y": {"x": [1, [2, [3]]]}}, "A": 0, "a": 1, "_": 2, "": 3}',
    '{"run_list": ["recipe[x]"], "attr": {"k": 1.0, "n": 100000000000000000000}}',
]

OPTIONS = [  # (Go JSONOptions, json.dumps keyword arguments)
    ('JSONOptions{}', {}),
    ('JSONOptions{SortKeys: true}', {'sort_keys': True}),
    ('JSONOptions{Indent: 1, SortKeys: true}', {'indent': 1, 'sort_keys': True, 'separators': (',', ': ')}),
    ('JSONOptions{Indent: 2, SortKeys: true}', {'indent': 2, 'sort_keys': True}),
    ('JSONOptions{Indent: 2}', {'indent': 2}),
]

VALUES = [  # (Go expression, Python value)
    ('math.NaN()', float('nan')),
    ('math.Inf(1)', float('inf')),
    ('math.Inf(-1)', float('-inf')),
    ('0.30000000000000004', 0.1 + 0.2),
    ('float64(1 << 60)', float(1 << 60)),
    ('-0.0', 0.0),  # Go's constant -0.0 is +0
    ('math.Copysign(0, -1)', -0.0),
    ('5e-324', 5e-324),
    ('int64(-9223372036854775808)', -9223372036854775808),
    ('uint64(18446744073709551615)', 18446744073709551615),
    ('[]any{int(3), int8(-4), uint16(5), 2.0}', [3, -4, 5, 2.0]),
    ('map[string]any{"n": math.NaN(), "l": []any{math.Inf(1)}}', {'l': [float('inf')], 'n': float('nan')}),
]




def gostr(s):
    if '`' not in s and '\n' not in s:
        return '`' + s + '`'
    return json.dumps(s)


def main():
    print('var jsonDocCases = []struct {\n\tdoc  string\n\topts JSONOptions\n\twant string\n}{')
    for doc in DOCS:
        # the options change containers only
        for goopts, kw in OPTIONS if doc[0] in '[{' else OPTIONS[:1]:
            print('\t{%s, %s, %s},' % (gostr(doc), goopts, gostr(json.dumps(json.loads(doc), **kw))))
    print('}\n')
    print('var jsonValueCases = []struct {\n\tv    any\n\twant string\n}{')
    for expr, value in VALUES:
        print('\t{%s, %s},' % (expr, gostr(json.dumps(value))))
    print('}')


main()
