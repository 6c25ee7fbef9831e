# SPDX-License-Identifier: MIT
"""The committed exports of tests/graph/data (make_shop_data.py) still show
the shop's call graph: whole traces, the same spans in all three formats'
JSON files. Needs neither node nor services."""

import json
import os

from shop_spans import check_traces, otlp_spans

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')


def test_committed_exports_are_the_shop_graph():
    with open(os.path.join(DATA, 'shop-ports.json')) as f:
        ports = json.load(f)
    spans = otlp_spans(os.path.join(DATA, 'shop-otlp.jsonl'))
    assert check_traces(spans, ports) == 12
    with open(os.path.join(DATA, 'shop-zipkin.json')) as f:
        zipkin = json.load(f)
    assert {(z['traceId'], z['id']) for z in zipkin} == {(s['trace'], s['id']) for s in spans}
    # Front's protobuf body carries front's span ids (binary, 8 bytes each).
    with open(os.path.join(DATA, 'shop-otlp.pb'), 'rb') as f:
        proto = f.read()
    front = [s for s in spans if s['svc'] == 'front']
    assert front and all(bytes.fromhex(s['id']) in proto for s in front)
