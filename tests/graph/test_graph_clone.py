# SPDX-License-Identifier: MIT
"""The clone of a graph, end to end (issue 21): the traced shop behind nginx
is profiled with the kernel graph, cloned (`ditto synth` of the graph
model: one clone per tier, redis and memcached cloned from what their
callers saw), started with `ditto up`, and profiled again under the same
load. The clone's graph must be the original's, from the kernel and from
the spans (the shop's tiers export theirs, the clone's export theirs, both
to `ditto profile --otlp-listen`): every edge, calls per parent request
within 2%, modes and orders exact. End-to-end latency and throughput of
both are printed side by side.

Real node, redis-server, memcached, nginx and wrk on 127.0.0.1; the
profiler is the real BPF collector (root)."""

import json
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

import ditto
from graph_truth import EDGES
from shop import Shop, install

CLI = os.environ.get('DITTO_CLI', 'ditto')
PROFILED = ('nginx', 'front', 'back', 'audit')

pytestmark = [
    pytest.mark.skipif(shutil.which('node') is None, reason='node is not installed'),
    pytest.mark.skipif(os.geteuid() != 0, reason='profiling needs root'),
]


def clean_env():
    return {k: v for k, v in os.environ.items()
            if k not in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')}


def wrk(url, seconds, connections):
    """wrk's requests, requests per second and p50/p99 latency in ms."""
    r = subprocess.run(['wrk', '-t1', '-c%d' % connections, '-d%ds' % seconds, '--latency', url],
                       capture_output=True, text=True, env=clean_env(), timeout=seconds + 30)
    assert r.returncode == 0 and 'Non-2xx' not in r.stdout, r.stdout

    def ms(pct):
        m = re.search(r'^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$' % pct, r.stdout, re.M)
        scale = {'us': 0.001, 'ms': 1.0, 's': 1000.0}[m.group(2)]
        return float(m.group(1)) * scale

    return {'requests': int(re.search(r'(\d+) requests in', r.stdout).group(1)),
            'rps': float(re.search(r'Requests/sec:\s+([\d.]+)', r.stdout).group(1)),
            'p50_ms': ms(50), 'p99_ms': ms(99)}


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def profile(targets, out, url, otlp_port, seconds=6):
    """Profile targets ({name: (pid, port)}) with the graph, and the spans
    they send to 127.0.0.1:otlp_port, while wrk -c1 drives url; the model
    as JSON."""
    args = [CLI, 'profile', '-q', '-d', str(seconds), '-W', '0', '--graph', '-o', out,
            '--otlp-listen', '127.0.0.1:%d' % otlp_port]
    for name, (pid, port) in sorted(targets.items()):
        args += ['--pid', str(pid), '--name', '%d=%s' % (port, name)]
    prof = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # the window is open
    wrk(url, seconds - 3, 1)
    _, err = prof.communicate(timeout=180)
    assert prof.returncode == 0, err
    js = subprocess.run([CLI, 'model', 'json', out], capture_output=True, text=True, check=True)
    return json.loads(js.stdout)


def edges(m, rename, source):
    return {(rename.get(e['from'], e['from']), rename.get(e['to'], e['to'])): e
            for e in m.get('graph', {}).get('edges', []) if e.get('source', 'kernel') == source}


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    install()
    d = tmp_path_factory.mktemp('clone')
    orig_dm, clone_dm, tree = str(d / 'orig.dm'), str(d / 'clone.dm'), str(d / 'tree')
    otlp = free_port()
    with Shop(nginx=True, otlp_http_url='http://127.0.0.1:%d/v1/traces' % otlp,
              env={'OTEL_BSP_SCHEDULE_DELAY': '200'}) as shop:
        ports = dict(shop.ports)
        orig = profile({t: (shop.pids[t], ports[t]) for t in PROFILED}, orig_dm, shop.url('/page'),
                       otlp)
        orig_perf = wrk(shop.url('/page'), 5, 1)
    # The shop is stopped: the clone tiers take the original's ports.
    r = subprocess.run([CLI, 'synth', orig_dm, '-o', tree], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ditto.build_graph(tree)
    manifest = json.load(open(os.path.join(tree, 'graph.json')))
    # The tiers inherit the environment: the clones export their spans.
    otlp = free_port()
    os.environ['OTEL_EXPORTER_OTLP_ENDPOINT'] = 'http://127.0.0.1:%d' % otlp
    try:
        with ditto.up(tree, max_seconds=600) as g:
            tiers = {t['name']: (t['pid'], t['port']) for t in g.tiers}
            front = 'http://%s/page' % g.front
            clone = profile(tiers, clone_dm, front, otlp)
            clone_perf = wrk(front, 5, 1)
    finally:
        del os.environ['OTEL_EXPORTER_OTLP_ENDPOINT']
    # External nodes of the original are services of the clone: one name.
    rename = {'redis-%d' % ports['redis']: 'redis',
              'memcached-%d' % ports['memcached']: 'memcached'}
    return {'orig': edges(orig, rename, 'kernel'), 'clone': edges(clone, rename, 'kernel'),
            'orig_traces': edges(orig, rename, 'traces'),
            'clone_traces': edges(clone, rename, 'traces'),
            'orig_perf': orig_perf, 'clone_perf': clone_perf, 'manifest': manifest,
            'tiers': tiers}


def test_the_tree_has_a_tier_per_node(run):
    names = {n['name'] for n in run['manifest']['nodes']}
    assert set(PROFILED) <= names, names
    assert set(run['tiers']) == names, (run['tiers'], names)
    assert run['manifest']['front'] == 'nginx'


def compare(orig, clone, keys):
    print('\n%-22s %10s %10s  %-18s %-18s' % ('edge', 'original', 'clone', 'mode', 'order'))
    for key in sorted(keys):
        o, c = orig.get(key), clone.get(key)
        assert o is not None, ('original lacks', key, sorted(orig))
        assert c is not None, ('clone lacks', key, sorted(clone))
        ro = o['calls'] / o['parent_requests']
        rc = c['calls'] / c['parent_requests']
        print('%-22s %10.3f %10.3f  %-18s %-18s' % ('%s->%s' % key, ro, rc,
              '%s/%s' % (o.get('mode'), c.get('mode')),
              '%s/%s' % (o.get('order'), c.get('order'))))
    for key in sorted(keys):
        o, c = orig[key], clone[key]
        ro = o['calls'] / o['parent_requests']
        rc = c['calls'] / c['parent_requests']
        assert abs(rc - ro) <= 0.02 * ro, (key, ro, rc)
        assert (c.get('mode'), c.get('order')) == (o['mode'], o['order']), (key, o, c)
    assert set(clone) == set(orig), (sorted(clone), sorted(orig))


def test_the_clone_graph_is_the_original_graph(run):
    compare(run['orig'], run['clone'], EDGES)


def test_the_clone_spans_give_the_original_traces_graph(run):
    """nginx has no tracing: the traces graph is the node tiers' and their
    databases', and the clone of nginx exports no spans either."""
    traced = [k for k in EDGES if k[0] != 'nginx']
    assert set(run['orig_traces']) == set(traced), sorted(run['orig_traces'])
    compare(run['orig_traces'], run['clone_traces'], traced)


def test_end_to_end_latency_side_by_side(run):
    o, c = run['orig_perf'], run['clone_perf']
    print('\n%-10s %12s %12s' % ('', 'original', 'clone'))
    for k in ('rps', 'p50_ms', 'p99_ms'):
        print('%-10s %12.2f %12.2f' % (k, o[k], c[k]))
    assert c['requests'] > 0 and o['requests'] > 0
