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

import math
import os
import re
import shutil
import subprocess
import time
import urllib.request

import pytest

from capture import Capture
from shop import Shop, install
from shop_spans import CLIENT, SERVER, check_traces, otlp_spans

pytestmark = pytest.mark.skipif(
    shutil.which('node') is None,
    reason='node is not installed: the shop (tests/apps/shop) needs Node.js (18.19+ or 20.6+) and npm')

PAGE_BYTES = 1000  # tests/apps/shop/env.js
WRK_CONNECTIONS = 4
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
