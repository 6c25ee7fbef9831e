# SPDX-License-Identifier: MIT
"""The shop's call graph as its OTLP JSON export shows it: spans read from
an OTLP file (one ExportTraceServiceRequest per line) and checked, trace by
trace, against what tests/apps/shop does per GET /page. Shared by
test_shop_app.py and make_shop_data.py (no pytest here)."""

import json
from collections import defaultdict

SERVER, CLIENT = 2, 3  # OTLP span kinds
ITEMS = 3  # back calls per page: tests/apps/shop/env.js
# The Node SDK takes a span's start from Date.now() (whole milliseconds) and
# its end as start + a high-resolution duration: both times of a span show up
# to 1 ms early, so times of two spans compare within 1 ms only.
SLACK_NS = 1000000


def _value(v):
    # OTLP JSON AnyValue: intValue is a string (int64) or, from some SDKs, a number.
    if 'intValue' in v:
        return int(v['intValue'])
    return next(iter(v.values()), None)


def otlp_spans(path):
    spans = []
    with open(path) as f:
        for line in f:
            for rs in json.loads(line)['resourceSpans']:
                res = {a['key']: _value(a['value']) for a in rs['resource'].get('attributes', [])}
                for ss in rs.get('scopeSpans', []):
                    for s in ss.get('spans', []):
                        spans.append({
                            'svc': res.get('service.name'), 'trace': s['traceId'], 'id': s['spanId'],
                            'parent': s.get('parentSpanId') or None, 'kind': s['kind'], 'name': s['name'],
                            'start': int(s['startTimeUnixNano']), 'end': int(s['endTimeUnixNano']),
                            'attrs': {a['key']: _value(a['value']) for a in s.get('attributes', [])}})
    return spans


def _port(span):
    # Stable HTTP/database conventions, or the older ones.
    a = span['attrs']
    return int(a.get('server.port') or a.get('net.peer.port') or 0)


def _db(span):
    return span['attrs'].get('db.system.name') or span['attrs'].get('db.system')


def check_trace(spans, ports, apart):
    """One /page trace has exactly the shop's calls; returns its front server
    span. apart gets the back end's call pairs that did not overlap."""
    by_id = {s['id']: s for s in spans}
    assert len(by_id) == len(spans), 'duplicate span ids'

    def server_of(s):
        # The SERVER span a span was made under, in its own service.
        while s['kind'] != SERVER:
            s = by_id[s['parent']]
        return s
    roots = [s for s in spans if s['parent'] is None]
    assert len(roots) == 1, roots
    page = roots[0]
    assert (page['svc'], page['kind'], page['attrs'].get('url.path', page['name'])) in \
        (('front', SERVER, '/page'), ('front', SERVER, 'GET /page')), page
    clients = [s for s in spans if s['kind'] == CLIENT]
    servers = [s for s in spans if s['kind'] == SERVER]
    assert len(clients) == 2 * ITEMS + 1 + ITEMS, clients
    assert len(servers) == 1 + ITEMS + 1, servers

    to_back = sorted((c for c in clients if c['svc'] == 'front' and _port(c) == ports['back']),
                     key=lambda c: c['start'])
    to_audit = [c for c in clients if c['svc'] == 'front' and _port(c) == ports['audit']]
    assert len(to_back) == ITEMS and len(to_audit) == 1
    for k, c in enumerate(to_back):
        assert server_of(c) is page
        assert c['attrs'].get('url.full', '').endswith('/item?i=%d' % k), c
        # Sequential: each call starts once the one before it has ended.
        if k:
            assert c['start'] + SLACK_NS >= to_back[k - 1]['end'], (to_back[k - 1], c)
        backs = [s for s in servers if s['parent'] == c['id']]
        assert len(backs) == 1 and backs[0]['svc'] == 'back', backs
        calls = [s for s in clients if s['svc'] == 'back' and server_of(s) is backs[0]]
        assert sorted((_db(s), _port(s)) for s in calls) == \
            [('memcached', ports['memcached']), ('redis', ports['redis'])], calls
        # Parallel: both are under way before either has ended (counted:
        # check_traces() allows a few that a busy host delayed).
        if max(s['start'] for s in calls) > min(s['end'] for s in calls) + SLACK_NS:
            apart.append(calls)
    audit_call = to_audit[0]
    assert server_of(audit_call) is page
    assert audit_call['start'] + SLACK_NS >= to_back[-1]['end']
    audits = [s for s in servers if s['parent'] == audit_call['id']]
    assert len(audits) == 1 and audits[0]['svc'] == 'audit', audits
    return page


def check_traces(spans, ports):
    """Every span is in a whole /page trace; returns the number of traces.
    The back end's two calls per request overlap in all but 2% of the
    requests (at least one allowed): sequential calls would overlap in
    none, and once in a CI run node's memcached client sent its call 1.2 ms
    after the redis reply came (the host busy), in one request of hundreds."""
    traces = defaultdict(list)
    apart = []
    for s in spans:
        traces[s['trace']].append(s)
    for trace in traces.values():
        check_trace(trace, ports, apart)
    assert len(apart) <= max(1, 0.02 * ITEMS * len(traces)), apart[:3]
    return len(traces)
