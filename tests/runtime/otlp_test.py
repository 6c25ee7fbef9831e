# SPDX-License-Identifier: MIT
"""The clone runtime's span exporter against libditto's own OTLP/HTTP
receiver (a real HTTP server, the one `ditto profile --otlp-listen` runs):
two tiers' spans (otlp_driver.c) import to the graph they describe; the
JSON is valid whatever the service name; URLs are checked; a receiver
that is not there, or refuses, costs the exporter its batches (counted)
and never hangs the process.

    otlp_test.py DRIVER   (PYTHONPATH and DITTO_LIBRARY as for tests/python)"""

import json
import os
import socket
import subprocess
import sys
import threading
import time

import ditto

DRIVER = sys.argv[1]
N = 3000


def run(*args, timeout=30):
    r = subprocess.run([DRIVER] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout)
    return r


def counts(stderr):
    line = [l for l in stderr.splitlines() if l.startswith('clone: spans:')]
    assert line, stderr
    words = line[-1].split()
    return {'recorded': int(words[2]), 'sent': int(words[4]), 'dropped': int(words[6]),
            'failed': int(words[10]), 'refused': int(words[13])}


def test_two_tiers_import_to_their_graph():
    with ditto.OtlpReceiver('127.0.0.1:0') as r:
        url = 'http://127.0.0.1:%d' % r.port
        for service, role in (('front', 'front'), ('back', 'back')):
            out = run(url, service, role, N)
            assert out.returncode == 0, out.stderr
            c = counts(out.stderr)
            per = 3 if role == 'front' else 1
            assert c == {'recorded': N * per, 'sent': N * per, 'dropped': 0, 'failed': 0,
                         'refused': 0}, c
        m = ditto.Model()
        r.finish(m)
    edges = {(e['from'], e['to']): e for e in m.graph_edges()}
    assert set(edges) == {('front', 'back'), ('front', 'redis-6379')}, sorted(edges)
    for key, e in edges.items():
        assert e['calls'] == N and e['parent_requests'] == N, (key, e)
        assert (e['mode'], e['order']) == ('sync', 'sequential'), (key, e)
    assert edges[('front', 'back')]['response_bytes']['total'] == N
    ext = {x['name']: x for x in m.get('graph.externals')}
    assert ext['redis-6379']['framing'] == 'resp', ext


def test_json_is_valid_whatever_the_name():
    name = 'a"b\\c\n\x01\x7fé'
    out = subprocess.run([DRIVER, '--dump', name, 'front', '3'], capture_output=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout.decode())
    rs = doc['resourceSpans'][0]
    attr = rs['resource']['attributes'][0]
    assert attr == {'key': 'service.name', 'value': {'stringValue': name}}, attr
    spans = rs['scopeSpans'][0]['spans']
    assert len(spans) == 9 and spans[0]['kind'] == 2 and spans[1]['kind'] == 3
    assert 'parentSpanId' not in spans[0] and spans[1]['parentSpanId'] == spans[0]['spanId']
    assert len(spans[0]['traceId']) == 32 and len(spans[0]['spanId']) == 16


def test_urls():
    cases = {
        'http://127.0.0.1:4318': '127.0.0.1 4318 /v1/traces',
        'http://collector:4318/': 'collector 4318 /v1/traces',
        'http://[::1]:9/x/v1/traces': '::1 9 /x/v1/traces',
        'http://h': 'h 80 /v1/traces',
    }
    for url, want in cases.items():
        assert run('--url', url).stdout.strip() == want, url
    for bad in ('https://h:1', 'http://:1', 'http://h:0', 'http://h:99999', 'http://h:1a',
                'http://[::1', 'http://h\r\nX: y:1', 'ftp://h', 'http://h:1/a b'):
        assert run('--url', bad).stdout.startswith('error: '), bad


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_no_receiver_costs_batches_not_time():
    t0 = time.time()
    out = run('http://127.0.0.1:%d' % free_port(), 'front', 'front', 2000)
    assert out.returncode == 0, out.stderr
    c = counts(out.stderr)
    assert c['sent'] == 0 and c['failed'] >= 1, c
    assert time.time() - t0 < 10


def refusing_server(status, stop):
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(8)
    srv.settimeout(0.2)

    def serve():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except socket.timeout:
                continue
            with c:
                c.settimeout(2)
                try:
                    data = b''
                    while b'\r\n\r\n' not in data:
                        data += c.recv(65536)
                    c.sendall(b'HTTP/1.1 %d No\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
                              % status)
                except OSError:
                    pass
        srv.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1]


def test_a_refusing_receiver_is_counted():
    stop = threading.Event()
    port = refusing_server(400, stop)
    try:
        out = run('http://127.0.0.1:%d' % port, 'front', 'front', 1000)
    finally:
        stop.set()
    assert out.returncode == 0, out.stderr
    c = counts(out.stderr)
    assert c['sent'] == 0 and c['refused'] >= 1, c


if __name__ == '__main__':
    for name, fn in sorted(globals().items()):
        if name.startswith('test_'):
            fn()
            print('ok', name)
