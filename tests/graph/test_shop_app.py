# SPDX-License-Identifier: MIT
"""Ground truth of the service-graph tests: the shop of tests/apps/shop,
driven by wrk through nginx, really has the call graph its code says, as
seen in its own raw exports (OTLP JSON file, Zipkin v2 POSTs):

  front  GET /page  -> back GET /item  x3, one after the other (sync)
                    -> audit POST /audit, not awaited (async)
  back   GET /item  -> redis GET + memcached get, at once (sync, parallel)

Real node, redis-server, memcached, nginx and wrk on 127.0.0.1. Skipped
only when node is not installed; the npm packages are installed here
(tests/apps/shop/install.sh) when missing."""

import json
import math
import os
import re
import shutil
import subprocess
import time
import urllib.request
from collections import defaultdict

import pytest

from capture import Capture
from shop import Shop, install

pytestmark = pytest.mark.skipif(
    shutil.which('node') is None,
    reason='node is not installed: the shop (tests/apps/shop) needs Node.js >= 20.6 and npm')

SERVER, CLIENT = 2, 3  # OTLP span kinds
ITEMS, PAGE_BYTES = 3, 1000  # tests/apps/shop/env.js
WRK_CONNECTIONS = 4
# The Node SDK takes a span's start from Date.now() (whole milliseconds) and
# its end as start + a high-resolution duration: both times of a span show up
# to 1 ms early, so times of two spans compare within 1 ms only.
SLACK_NS = 1000000
ZIPKIN_PATH = '/api/v2/spans'


@pytest.fixture(scope='module', autouse=True)
def installed():
    for program in ('redis-server', 'memcached', 'nginx', 'wrk'):
        if not (shutil.which(program) or os.access('/usr/sbin/' + program, os.X_OK)):
            pytest.fail('%s is missing: scripts/bootstrap.sh installs it' % program)
    install()


def wrk(url, seconds):
    """Requests wrk completed; fails on any error or non-2xx answer."""
    env = {k: v for k, v in os.environ.items() if k not in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')}
    r = subprocess.run([shutil.which('wrk'), '-t1', '-c%d' % WRK_CONNECTIONS, '-d%ds' % seconds, url],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=seconds + 30)
    assert r.returncode == 0, r.stdout
    assert 'Non-2xx' not in r.stdout and 'Socket errors' not in r.stdout, r.stdout
    done = int(re.search(r'(\d+) requests in', r.stdout).group(1))
    assert done > 0, r.stdout
    return done


def get_page(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.status == 200
        assert len(r.read()) == PAGE_BYTES


def run(shop, url, seconds):
    """One checked GET, then wrk; waits for the requests wrk cut short to
    finish, then stops the shop (the tiers flush their spans). Returns the
    number of requests answered to the clients."""
    try:
        get_page(url)
        done = wrk(url, seconds)
        # wrk's last requests go on in the tiers after it hangs up.
        time.sleep(1)
    finally:
        codes = shop.stop()
    for tier in ('front', 'back', 'audit'):
        assert codes[tier] == 0, 'tier %s exited with %s:\n%s' % (tier, codes[tier], shop.logs.get(tier))
    return done + 1


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


def check_trace(spans, ports):
    """One /page trace has exactly the shop's calls; returns its front server span."""
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
        # Parallel: both are under way before either has ended.
        assert max(s['start'] for s in calls) <= min(s['end'] for s in calls) + SLACK_NS, calls
    audit_call = to_audit[0]
    assert server_of(audit_call) is page
    assert audit_call['start'] + SLACK_NS >= to_back[-1]['end']
    audits = [s for s in servers if s['parent'] == audit_call['id']]
    assert len(audits) == 1 and audits[0]['svc'] == 'audit', audits
    return page


def check_traces(spans, ports):
    """Every span is in a whole /page trace; returns the number of traces."""
    traces = defaultdict(list)
    for s in spans:
        traces[s['trace']].append(s)
    for trace in traces.values():
        check_trace(trace, ports)
    return len(traces)


def test_shop_graph_in_otlp_and_zipkin_exports(tmp_path):
    otlp_file = tmp_path / 'otlp.jsonl'
    t0 = time.monotonic()
    with Capture() as cap, Shop(otlp_file=otlp_file, zipkin_url=cap.url(ZIPKIN_PATH), nginx=True) as shop:
        ports = dict(shop.ports)
        answered = run(shop, shop.url('/page'), seconds=3)
        zipkin = cap.zipkin_spans(ZIPKIN_PATH)
    spans = otlp_spans(otlp_file)
    pages = check_traces(spans, ports)
    print('shop: %d pages answered, %d traced, %d spans, %.1f s' % (answered, pages, len(spans), time.monotonic() - t0))
    # Every answered page is traced, and at most the requests wrk cut short besides.
    assert answered <= pages <= answered + WRK_CONNECTIONS
    assert {s['svc'] for s in spans} == {'front', 'back', 'audit'}

    # Zipkin got the very same spans, with the same kinds and services.
    assert {(z['traceId'], z['id']) for z in zipkin} == {(s['trace'], s['id']) for s in spans}
    kinds = {SERVER: 'SERVER', CLIENT: 'CLIENT'}
    otlp_kind = {s['id']: kinds.get(s['kind']) for s in spans}
    for z in zipkin:
        assert z.get('kind') == otlp_kind[z['id']], z
    assert {z['localEndpoint']['serviceName'] for z in zipkin} == {'front', 'back', 'audit'}
    assert {(z['localEndpoint']['serviceName'], z.get('kind')) for z in zipkin} >= {
        ('front', 'SERVER'), ('front', 'CLIENT'), ('back', 'SERVER'), ('back', 'CLIENT'), ('audit', 'SERVER')}


def test_sampled_traces_are_whole(tmp_path):
    """Parent-based ratio sampling: front decides, back and audit follow,
    so a trace is whole or absent. Straight to front (no nginx)."""
    otlp_file = tmp_path / 'otlp.jsonl'
    ratio = 0.25
    with Shop(otlp_file=otlp_file, sample_ratio=ratio) as shop:
        ports = dict(shop.ports)
        answered = run(shop, shop.url('/page'), seconds=3)
    pages = check_traces(otlp_spans(otlp_file), ports)
    print('sampled %d of %d pages (ratio %.2f)' % (pages, answered, ratio))
    # About Binomial(answered, ratio) (plus the few wrk cut short): 5 sigma.
    assert answered >= 40
    assert abs(pages - answered * ratio) <= 5 * math.sqrt(answered * ratio * (1 - ratio)) + WRK_CONNECTIONS
