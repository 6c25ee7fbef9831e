#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write one small hand-made scenario as OTLP JSON, Jaeger JSON and Zipkin
v2 JSON (the files next to this script), so that test_traces.c can assert
the same graph from each format. Run it again after changing the scenario.

Three requests to `front`. Each makes two sequential HTTP calls to `back`
(request 0 a third), one redis call under an INTERNAL span, and one call to
`audit` that ends after front's response (async). back serves each call; its
first call makes two overlapping memcached calls, its second one. Trace 1
also holds a memcached call whose parent is in no file (an orphan)."""

import json
import os

BASE_US = 1700000000000000
HERE = os.path.dirname(os.path.abspath(__file__))


def scenario():
    spans = []   # dicts: trace, id, parent, service, kind, name, start, end, attrs
    for k in range(3):
        t = '%032x' % (0xabc000 + k)
        base = BASE_US + k * 10000
        nid = [0]

        def sid():
            nid[0] += 1
            return '%016x' % ((k + 1) << 32 | nid[0])

        def add(parent, service, kind, name, s, e, **attrs):
            sp = dict(trace=t, id=sid(), parent=parent, service=service, kind=kind,
                      name=name, start=base + s, end=base + e, attrs=attrs)
            spans.append(sp)
            return sp['id']
        f = add(None, 'front', 'SERVER', 'GET /', 0, 1000, **{'server.port': 8080})
        c1 = add(f, 'front', 'CLIENT', 'GET /b', 100, 300,
                 **{'http.method': 'GET', 'server.port': 8081,
                    'http.request_content_length': 100})
        b1 = add(c1, 'back', 'SERVER', 'GET /b', 110, 290,
                 **{'http.response_content_length': 2000})
        add(b1, 'back', 'CLIENT', 'get', 150, 250, **{'db.system': 'memcached',
                                                      'net.peer.port': 11211})
        add(b1, 'back', 'CLIENT', 'get', 160, 260, **{'db.system': 'memcached',
                                                      'net.peer.port': 11211})
        c2 = add(f, 'front', 'CLIENT', 'GET /b', 350, 550, **{'http.method': 'GET',
                                                              'server.port': 8081})
        b2 = add(c2, 'back', 'SERVER', 'GET /b', 360, 540)
        add(b2, 'back', 'CLIENT', 'get', 400, 450, **{'db.system': 'memcached',
                                                      'net.peer.port': 11211})
        i = add(f, 'front', 'INTERNAL', 'work', 560, 720)
        add(i, 'front', 'CLIENT', 'GET', 600, 700, **{'db.system': 'redis',
                                                      'net.peer.name': '127.0.0.1',
                                                      'net.peer.port': 6379})
        if k == 0:
            c3 = add(f, 'front', 'CLIENT', 'GET /b', 720, 800, **{'http.method': 'GET'})
            add(c3, 'back', 'SERVER', 'GET /b', 730, 790)
        a = add(f, 'front', 'CLIENT', 'POST /audit', 900, 1500, **{'http.method': 'POST'})
        add(a, 'audit', 'SERVER', 'POST /audit', 910, 1490)
        if k == 1:
            add('00000000deadbeef', 'back', 'CLIENT', 'get', 100, 120,
                **{'db.system': 'memcached', 'net.peer.port': 11211})
    return spans


KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT',
         'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER']


def otlp(spans):
    """JSON Lines, one document per service; front's times are strings, its
    kinds enum names and its intValues strings; the others numbers. Every
    span declares 50% sampling in its tracestate (ot=th:8)."""
    lines = []
    for service in ('front', 'back', 'audit'):
        as_str = service == 'front'
        out = []
        for sp in spans:
            if sp['service'] != service:
                continue
            kind = KINDS.index('SPAN_KIND_' + sp['kind'])
            attrs = []
            for key, v in sp['attrs'].items():
                if isinstance(v, int):
                    attrs.append({'key': key, 'value': {'intValue': str(v) if as_str else v}})
                else:
                    attrs.append({'key': key, 'value': {'stringValue': v}})
            o = {'traceId': sp['trace'], 'spanId': sp['id'], 'name': sp['name'],
                 'kind': KINDS[kind] if as_str else kind,
                 'startTimeUnixNano': str(sp['start'] * 1000) if as_str else sp['start'] * 1000,
                 'endTimeUnixNano': str(sp['end'] * 1000) if as_str else sp['end'] * 1000,
                 'traceState': 'ot=th:8', 'attributes': attrs,
                 'links': [{'traceId': sp['trace'], 'spanId': 'ffffffffffffffff'}],
                 'status': {}}
            if sp['parent']:
                o['parentSpanId'] = sp['parent']
            out.append(o)
        lines.append(json.dumps({'resourceSpans': [{
            'resource': {'attributes': [{'key': 'service.name',
                                         'value': {'stringValue': service}}]},
            'scopeSpans': [{'scope': {'name': 'test'}, 'spans': out}]}]}))
    return '\n'.join(lines) + '\n'


def jaeger(spans):
    """The query API's answer; processes declare probabilistic 0.5."""
    data = []
    for t in sorted({sp['trace'] for sp in spans}):
        procs = {}
        out = []
        for sp in spans:
            if sp['trace'] != t:
                continue
            pid = 'p%d' % (['front', 'back', 'audit'].index(sp['service']) + 1)
            procs[pid] = {'serviceName': sp['service'], 'tags': [
                {'key': 'sampler.type', 'type': 'string', 'value': 'probabilistic'},
                {'key': 'sampler.param', 'type': 'float64', 'value': 0.5}]}
            tags = [{'key': 'span.kind', 'type': 'string', 'value': sp['kind'].lower()}]
            for key, v in sp['attrs'].items():
                tags.append({'key': key, 'type': 'int64' if isinstance(v, int) else 'string',
                             'value': v})
            refs = []
            if sp['parent']:
                refs.append({'refType': 'CHILD_OF', 'traceID': t, 'spanID': sp['parent']})
            out.append({'traceID': t, 'spanID': sp['id'], 'operationName': sp['name'],
                        'references': refs, 'startTime': sp['start'],
                        'duration': sp['end'] - sp['start'], 'tags': tags, 'logs': [],
                        'processID': pid, 'warnings': None, 'flags': 1})
        data.append({'traceID': t, 'spans': out, 'processes': procs, 'warnings': None})
    return json.dumps({'data': data, 'total': 0, 'limit': 0, 'offset': 0, 'errors': None},
                      indent=1) + '\n'


def zipkin(spans):
    """A v2 span list. back's server spans share their client's id (B3
    single-host style, shared: true); their children name the shared id."""
    byid = {sp['id']: sp for sp in spans}
    rename = {}
    for sp in spans:
        p = byid.get(sp['parent'])
        if sp['kind'] == 'SERVER' and p and p['kind'] == 'CLIENT':
            rename[sp['id']] = p['id']
    out = []
    for sp in spans:
        parent = rename.get(sp['parent'], sp['parent'])
        o = {'traceId': sp['trace'][16:], 'id': rename.get(sp['id'], sp['id']),
             'name': sp['name'].lower(), 'timestamp': sp['start'],
             'duration': sp['end'] - sp['start'],
             'localEndpoint': {'serviceName': sp['service'], 'ipv4': '127.0.0.1'},
             'tags': {key: str(v) for key, v in sp['attrs'].items()}}
        if sp['kind'] != 'INTERNAL':
            o['kind'] = sp['kind']
        if sp['id'] in rename:
            o['shared'] = True
            o['parentId'] = byid[sp['parent']]['parent']   # the client's parent
        elif parent:
            o['parentId'] = parent
        if 'net.peer.port' in sp['attrs']:
            o['remoteEndpoint'] = {'port': sp['attrs']['net.peer.port']}
        out.append(o)
    return json.dumps(out, indent=1) + '\n'


def main():
    spans = scenario()
    for name, text in (('scenario.otlp.jsonl', otlp(spans)),
                       ('scenario.jaeger.json', jaeger(spans)),
                       ('scenario.zipkin.json', zipkin(spans))):
        with open(os.path.join(HERE, name), 'w') as f:
            f.write(text)


if __name__ == '__main__':
    main()
