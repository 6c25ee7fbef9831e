# SPDX-License-Identifier: MIT
"""The clone's client side: a front clone whose model has edges to a real
redis-server, a real memcached, another clone and small HTTP children
calls each as the edge says. Counted at the children (redis INFO
commandstats, memcached stats, the child clone's served requests, the
HTTP child's log), per front request, against the model's calls per
request; sync calls delay the front's answer and async ones do not;
parallel calls overlap; a dead child is counted and the front keeps
serving; a child that restarts is reached again; W3C traceparent
reaches an HTTP child."""

import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

import ditto as d
from conftest import Service, ditto, free_port, need, stop

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK = os.environ.get('DITTO_SYNTH_QUICK') == '1'
TP = re.compile(r'^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$')


def service(m, name, port):
    s = m.add_service(name, framing='http1')
    s.add_port(port)
    s.add_thread('main', count=1, role='network', io_model='epoll')
    s.network.io_model = 'epoll'
    s.network.network_threads = 1
    s.requests.count = 1000
    s.requests.response_bytes.add(100, 1000)
    return s


def edge(m, to, fanout, mode='sync', order='sequential', req_bytes=40):
    """fanout: {calls in one front request: front requests}."""
    e = m.graph.add_edge('front', to, mode=mode, order=order)
    for calls, n in fanout.items():
        e.fanout.add(calls, n)
    e.calls = sum(c * n for c, n in fanout.items())
    e.parent_requests = sum(fanout.values())
    e.request_bytes.add(req_bytes, max(e.calls, 1))
    return sum(c * n for c, n in fanout.items()) / sum(fanout.values())


def build(tmp_path, m, name='front', tag='front'):
    path = tmp_path / ('%s.msgpack' % tag)
    m.save(str(path))
    tree = tmp_path / tag
    r = ditto('synth', path, '-o', tree, '--service', name, *(['--no-build'] if QUICK else []))
    return tree, r.stderr


class Run:
    """A built clone on a free port with --stats; its stderr kept to read
    its counts after it stopped."""

    def __init__(self, tree, *extra, env=None):
        self.port = free_port()
        self.err = open(str(tree / 'stderr.log'), 'w+')
        self.proc = subprocess.Popen([str(tree / 'clone'), '--port', str(self.port),
                                      '--max-seconds', '120', '--stats'] + list(extra),
                                     stdout=subprocess.PIPE, stderr=self.err,
                                     env=dict(os.environ, **(env or {})))
        line = self.proc.stdout.readline()
        if line.strip() != b'ready':
            self.proc.kill()
            self.proc.wait()
            raise AssertionError('clone did not start: %r %s' % (line, self.text()))

    def text(self):
        self.err.seek(0)
        return self.err.read()

    def stop(self):
        rc = stop(self.proc)
        self.proc.stdout.close()
        out = self.text()
        self.err.close()
        assert rc == 0, out
        return out


def served(text):
    return sum(int(n) for n in re.findall(r'clone: served (\d+) requests', text))


def upstream(text, name):
    m = re.search(r'clone: upstream %s: calls (\d+), errors (\d+), timeouts (\d+), skipped (\d+)'
                  % re.escape(name), text)
    assert m, text
    return dict(zip(('calls', 'errors', 'timeouts', 'skipped'), map(int, m.groups())))


def load(port, n, connections=1):
    r = ditto('load', '--port', port, '--framing', 'http1', '-n', n, '-c', connections,
              '--json', timeout=240)
    return json.loads(r.stdout)


def p50_ms(result):
    return result['latency_ns']['p50'] / 1e6


@pytest.fixture
def procs():
    """Services and clones to stop whatever happens."""
    objs = []
    yield objs
    for o in objs:
        if o.proc.poll() is None:
            try:
                stop(o.proc)
            except AssertionError:
                pass


def http_child(tmp_path, procs, delay_ms=0, tag='child'):
    port = free_port()
    log = tmp_path / ('%s.log' % tag)
    log.write_text('')
    procs.append(Service([sys.executable, os.path.join(HERE, 'up_http_child.py'), str(port),
                          str(delay_ms), str(log)], port))
    return port, log


def test_synth_lists_children_and_warns_for_unspoken_framing(tmp_path):
    m = d.Model()
    service(m, 'front', free_port())
    m.graph.add_external('pg-5432', address='127.0.0.1', port=5432, framing='postgres')
    edge(m, 'pg-5432', {1: 10})
    m.graph.add_external('redis-6379', address='127.0.0.1', port=6379, framing='resp')
    edge(m, 'redis-6379', {2: 10}, mode='async', order='parallel')
    path = tmp_path / 'm.msgpack'
    m.save(str(path))
    r = ditto('synth', path, '-o', tmp_path / 'tree', '--no-build')
    assert 'pg-5432 speaks postgres' in r.stderr and 'raw' in r.stderr
    assert 'drops these calls' not in r.stderr
    # a model with edges is a graph: the service's tree is its node's
    readme = (tmp_path / 'tree' / 'front' / 'README.md').read_text()
    assert 'DITTO_UPSTREAM_REDIS_6379' in readme and 'DITTO_UPSTREAM_PG_5432' in readme
    assert '2.000 calls per request, async, parallel' in readme
    cfg = (tmp_path / 'tree' / 'front' / 'clone_config.c').read_text()
    assert '"redis-6379"' in cfg and 'RT_FRAMING_RESP' in cfg and '.nupstreams = 2' in cfg


@pytest.mark.skipif(QUICK, reason='clones are built and driven in the plain build only')
def test_calls_per_request_reach_redis_memcached_and_a_clone(tmp_path, procs):
    need('redis-server')
    need('memcached')
    rport, mport = free_port(), free_port()
    procs.append(Service(['redis-server', '--port', str(rport), '--bind', '127.0.0.1',
                          '--save', '', '--appendonly', 'no'], rport))
    procs.append(Service(['memcached', '-l', '127.0.0.1', '-p', str(mport), '-U', '0',
                          '-t', '1'] + (['-u', 'root'] if os.geteuid() == 0 else []), mport))
    m = d.Model()
    service(m, 'front', free_port())
    service(m, 'back', free_port())
    m.graph.add_external('redis-6379', address='127.0.0.1', port=6379, framing='resp')
    m.graph.add_external('memcached-11211', address='127.0.0.1', port=11211,
                         framing='memcache-text')
    want = {'redis-6379': edge(m, 'redis-6379', {2: 1000}),
            'memcached-11211': edge(m, 'memcached-11211', {1: 500, 2: 500}, order='parallel'),
            'back': edge(m, 'back', {1: 1000}, order='parallel')}
    back_tree, _ = build(tmp_path, m, 'back', 'back')
    front_tree, err = build(tmp_path, m)
    assert 'drops these calls' not in err
    back = Run(back_tree)
    procs.append(back)
    front = Run(front_tree, '--upstream', 'redis-6379=127.0.0.1:%d' % rport,
                '--upstream', 'back=localhost:%d' % back.port,
                env={'DITTO_UPSTREAM_MEMCACHED_11211': '127.0.0.1:%d' % mport})
    procs.append(front)
    result = load(front.port, 3000, connections=4)
    text = front.stop()
    n = served(text)
    assert n >= 3000 and result['completed'] >= 3000
    with socket.create_connection(('127.0.0.1', rport)) as s:
        s.sendall(b'INFO commandstats\r\n')
        time.sleep(0.2)
        info = s.recv(65536).decode()
    redis_calls = int(re.search(r'cmdstat_get:calls=(\d+)', info).group(1))
    with socket.create_connection(('127.0.0.1', mport)) as s:
        s.sendall(b'stats\r\n')
        time.sleep(0.2)
        stats = s.recv(65536).decode()
    mc_calls = sum(int(re.search(r'STAT %s (\d+)' % k, stats).group(1))
                   for k in ('cmd_get', 'cmd_set'))
    back_calls = served(back.stop())
    got = {'redis-6379': redis_calls / n, 'memcached-11211': mc_calls / n, 'back': back_calls / n}
    for name, w in want.items():
        assert abs(got[name] - w) <= 0.02 * w, (name, got, want, text)
        counts = upstream(text, name)
        assert counts['errors'] == 0 and counts['timeouts'] == 0 and counts['skipped'] == 0
    # what the children counted is what the front says it called
    assert upstream(text, 'redis-6379')['calls'] == redis_calls
    assert upstream(text, 'back')['calls'] == back_calls


def front_to(tmp_path, port, fanout, mode, order, tag):
    m = d.Model()
    service(m, 'front', free_port())
    m.graph.add_external('slow', address='127.0.0.1', port=port, framing='http1')
    edge(m, 'slow', fanout, mode=mode, order=order)
    tree, _ = build(tmp_path, m, tag=tag)
    return tree


@pytest.mark.skipif(QUICK, reason='clones are built and driven in the plain build only')
def test_sync_calls_delay_the_response_async_do_not_parallel_overlap(tmp_path, procs):
    port, log = http_child(tmp_path, procs, delay_ms=50)
    cases = {'sync': ({1: 10}, 'sync', 'sequential'),
             'async': ({1: 10}, 'async', 'sequential'),
             'seq4': ({4: 10}, 'sync', 'sequential'),
             'par4': ({4: 10}, 'sync', 'parallel')}
    p50 = {}
    for tag, (fan, mode, order) in cases.items():
        tree = front_to(tmp_path, port, fan, mode, order, tag)
        front = Run(tree, '--upstream', 'slow=127.0.0.1:%d' % port)
        procs.append(front)
        p50[tag] = p50_ms(load(front.port, 20))
        counts = upstream(front.stop(), 'slow')
        assert counts['errors'] == 0 and counts['timeouts'] == 0, (tag, counts)
    # the child answers each call after 50 ms
    assert p50['sync'] >= 50, p50
    assert p50['async'] < 25, p50
    assert p50['seq4'] >= 200, p50
    assert 50 <= p50['par4'] < 120, p50


@pytest.mark.skipif(QUICK, reason='clones are built and driven in the plain build only')
def test_an_event_loop_serves_other_connections_while_its_calls_wait(tmp_path, procs):
    """An epoll front parks a request on its sync call (rt_park.c): four
    connections' calls to a child that answers after 50 ms overlap, as
    an event loop's do, instead of queueing behind one another (p50
    200 ms when the serving thread waited); a call past
    --upstream-timeout-ms ends as a timeout and the request is answered."""
    port, log = http_child(tmp_path, procs, delay_ms=50)
    tree = front_to(tmp_path, port, {2: 10}, 'sync', 'sequential', 'loop')
    front = Run(tree, '--upstream', 'slow=127.0.0.1:%d' % port)
    procs.append(front)
    result = load(front.port, 40, connections=4)
    counts = upstream(front.stop(), 'slow')
    assert result['completed'] == 40 and not result.get('failed'), result
    assert counts == {'calls': 80, 'errors': 0, 'timeouts': 0, 'skipped': 0}, counts
    # two sequential 50 ms calls each: 100 ms alone, 400 ms queued behind 3
    assert 100 <= p50_ms(result) < 200, result['latency_ns']

    front = Run(tree, '--upstream', 'slow=127.0.0.1:%d' % port, '--upstream-timeout-ms', '20')
    procs.append(front)
    result = load(front.port, 8, connections=2)
    counts = upstream(front.stop(), 'slow')
    assert result['completed'] == 8 and not result.get('failed'), result
    assert counts['calls'] == 16 and counts['timeouts'] == 16, counts
    assert p50_ms(result) < 50, result['latency_ns']


@pytest.mark.skipif(QUICK, reason='clones are built and driven in the plain build only')
def test_dead_or_unconfigured_child_is_counted_and_the_front_serves(tmp_path, procs):
    m = d.Model()
    service(m, 'front', free_port())
    m.graph.add_external('gone', address='127.0.0.1', port=1, framing='resp')
    m.graph.add_external('nowhere', address='127.0.0.1', port=2, framing='memcache-text')
    edge(m, 'gone', {3: 10})
    edge(m, 'nowhere', {1: 10}, order='parallel')
    tree, _ = build(tmp_path, m)
    dead = free_port()	# nothing listens there
    front = Run(tree, '--upstream', 'gone=127.0.0.1:%d' % dead)
    procs.append(front)
    result = load(front.port, 200)
    text = front.stop()
    assert result['completed'] >= 200 and not result.get('failed'), result
    gone, nowhere = upstream(text, 'gone'), upstream(text, 'nowhere')
    n = served(text)
    assert gone['calls'] == 3 * n and gone['errors'] == 3 * n, (gone, n)
    assert nowhere['skipped'] == n and nowhere['calls'] == 0, (nowhere, n)
    assert 'upstream nowhere: no address' in text


@pytest.mark.skipif(QUICK, reason='clones are built and driven in the plain build only')
def test_traceparent_reaches_an_http_child(tmp_path, procs):
    port, log = http_child(tmp_path, procs)
    tree = front_to(tmp_path, port, {2: 10}, 'sync', 'sequential', 'tp')
    front = Run(tree, '--upstream', 'slow=127.0.0.1:%d' % port)
    procs.append(front)
    inbound = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    heads = [('traceparent', inbound), None, ('traceparent', '00-' + '0' * 32 + '-00f067aa0ba902b7-01'),
             ('traceparent', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01')]
    with socket.create_connection(('127.0.0.1', front.port)) as s:
        for h in heads:
            extra = '%s: %s\r\n' % h if h else ''
            s.sendall(('GET / HTTP/1.1\r\nHost: x\r\n%s\r\n' % extra).encode())
            got = b''
            while b'\r\n\r\n' not in got:
                got += s.recv(65536)
            head, body = got.split(b'\r\n\r\n', 1)
            length = int(re.search(rb'Content-Length: (\d+)', head).group(1))
            while len(body) < length:
                body += s.recv(65536)
    front.stop()
    lines = log.read_text().split()
    assert len(lines) == 8, lines
    parsed = [TP.match(ln) for ln in lines]
    assert all(parsed), lines
    ids = [p.groups() for p in parsed]
    # the inbound trace goes on, each call a span of its own
    assert ids[0][0] == ids[1][0] == '4bf92f3577b34da6a3ce929d0e0e4736'
    assert ids[0][1] != ids[1][1] and '00f067aa0ba902b7' not in (ids[0][1], ids[1][1])
    assert ids[0][2] == '01'
    # no traceparent, an all-zero trace id, uppercase hex: a fresh trace each
    fresh = {ids[i][0] for i in range(2, 8)}
    assert len(fresh) == 3 and '4bf92f3577b34da6a3ce929d0e0e4736' not in fresh
    assert '0' * 32 not in fresh
    for i in (2, 4, 6):
        assert ids[i][0] == ids[i + 1][0]


@pytest.mark.skipif(QUICK, reason='clones are built and driven in the plain build only')
def test_a_restarted_child_is_reached_again(tmp_path, procs):
    port, log = http_child(tmp_path, procs, tag='first')
    tree = front_to(tmp_path, port, {1: 10}, 'sync', 'sequential', 'restart')
    front = Run(tree, '--upstream', 'slow=localhost:%d' % port)
    procs.append(front)
    load(front.port, 50)
    stop(procs[0].proc)	# the child goes away; the front keeps its pooled connection
    procs.append(Service([sys.executable, os.path.join(HERE, 'up_http_child.py'), str(port), '0',
                          str(log)], port))
    load(front.port, 50)
    counts = upstream(front.stop(), 'slow')
    # the stale pooled connection is replaced, not counted as a failure
    assert counts == {'calls': 100, 'errors': 0, 'timeouts': 0, 'skipped': 0}, counts
    assert len(log.read_text().split()) == 100
