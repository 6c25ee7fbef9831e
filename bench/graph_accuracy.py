#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The clone of a graph against its original, end to end
(bench/graph-accuracy.sh): the traced shop of tests/apps/shop behind
nginx (tests/graph/shop.py) is profiled with its kernel graph (twice: the
second profile is the original against itself), cloned (`ditto synth`,
built, started with `ditto up` on ports of its own next to the original),
and the clone is profiled the same way. Then one table:
  1. per tier, system calls per served request by kind and socket bytes
     per request in and out, original vs clone with the relative error
     (and the original's own spread, and the bound tests/graph asserts);
  2. per edge, calls per parent request and mode/order, original vs clone
     (kernel graph);
  3. end-to-end latency p50/p99 at a low and a high closed-loop load
     (wrk -c1, -c16) and the saturation throughput (wrk -c64), original
     and clone driven in turn, rounds interleaved, with the spread of the
     rounds and the clone/original ratio per round;
  4. the Ditto paper's reported figures for its one microservice graph as
     the reference.
Needs root, node, redis-server, memcached, nginx, wrk.

    bench/graph-accuracy.sh [BUILDDIR] [ROUNDS] [SECONDS]"""

import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'graph'))

import tier_rates  # noqa: E402
from graph_truth import EDGES  # noqa: E402
from shop import Shop, install  # noqa: E402

import ditto  # noqa: E402

TIERS = ('nginx', 'front', 'back', 'audit')
EXTERNALS = ('redis', 'memcached')
LOADS = (('low', 1), ('high', 16), ('saturation', 64))
PROFILE_SECONDS = 6

# The Ditto paper (ASPLOS'23) on its one microservice graph (an
# open-source research benchmark, one replica per service, two tiers
# validated in detail, the rest said to be similar), and its averages
# over all its services: figures only, as the paper reports them.
PAPER = (
    ('network bandwidth error (bytes)', '0.1% (average, all services)'),
    ('disk bandwidth error', '0.1% (average, all services)'),
    ('IPC error', '4.1% (average, all services)'),
    ('p99 latency', 'matches at low and medium load, diverges at high load'),
    ('per-tier system calls', 'not reported per tier'),
    ('graph', 'one graph, RPC edges from distributed tracing'),
)


def clean_env():
    return {k: v for k, v in os.environ.items()
            if k not in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS')}


def wrk(url, seconds, connections):
    """requests per second, p50 and p99 latency in ms."""
    r = subprocess.run(['wrk', '-t1', '-c%d' % connections, '-d%ds' % seconds, '--latency', url],
                       capture_output=True, text=True, env=clean_env(), timeout=seconds + 60)
    if r.returncode != 0 or 'Non-2xx' in r.stdout:
        sys.exit('wrk failed on %s: %s' % (url, r.stdout + r.stderr))

    def ms(pct):
        m = re.search(r'^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$' % pct, r.stdout, re.M)
        return float(m.group(1)) * {'us': 0.001, 'ms': 1.0, 's': 1000.0}[m.group(2)]

    return {'rps': float(re.search(r'Requests/sec:\s+([\d.]+)', r.stdout).group(1)),
            'p50': ms(50), 'p99': ms(99)}


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def free_base(n):
    """A port p with p..p+n-1 all free on 127.0.0.1 now."""
    for base in range(31000, 40000, 16):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(('127.0.0.1', p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    sys.exit('no %d free ports in a row' % n)


def say(what):
    print('graph-accuracy: ' + what, file=sys.stderr, flush=True)


def profile(cli, targets, out, url, otlp_port):
    """The graph model (JSON) of targets ({name: (pid, port)}) under
    wrk -c1 on url; spans to 127.0.0.1:otlp_port when given."""
    say('profiling %s' % ', '.join('%s=%d/%d' % (n, p, q) for n, (p, q) in sorted(targets.items())))
    args = [cli, 'profile', '-q', '-d', str(PROFILE_SECONDS), '-W', '0', '--graph', '-o', out]
    if otlp_port:
        args += ['--otlp-listen', '127.0.0.1:%d' % otlp_port]
    for name, (pid, port) in sorted(targets.items()):
        args += ['--pid', str(pid), '--name', '%d=%s' % (port, name)]
    prof = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    wrk(url, PROFILE_SECONDS - 3, 1)
    _, err = prof.communicate(timeout=180)
    if prof.returncode:
        sys.exit('profile of %s failed: %s' % (out, err))
    js = subprocess.run([cli, 'model', 'json', out], capture_output=True, text=True, check=True)
    return json.loads(js.stdout)


def kernel_edges(m, rename):
    return {(rename.get(e['from'], e['from']), rename.get(e['to'], e['to'])): e
            for e in m.get('graph', {}).get('edges', []) if e.get('source', 'kernel') == 'kernel'}


def pct(x):
    return '%.1f%%' % (100 * x)


def print_syscalls(orig, orig2, clone):
    print('\n1. system calls per served request, by kind (wrk -c1; tests/graph/tier_rates.py)')
    print('%-6s %-10s %9s %9s %9s %7s %7s %7s' % ('tier', 'kind', 'original', 'again', 'clone',
                                                 'self', 'error', 'bound'))
    rows = tier_rates.syscall_rows(orig, orig2, clone, TIERS)
    for t, k, a, a2, c in rows:
        verdict, bound = tier_rates.syscall_verdict(rows, t, k, a, c, a2)
        print('%-6s %-10s %9.3f %9.3f %9.3f %7s %7s %7s  %s' % (
            t, k, a, a2, c, pct(tier_rates.rel(a, a2)), pct(tier_rates.rel(a, c)), pct(bound),
            verdict))
    print('(redis and memcached: externals of the original\'s profile, no syscall table)')


def print_bytes(orig_model, orig, clone, ports):
    print('\n   socket bytes per request (externals: as the original\'s callers saw them)')
    print('%-10s %9s %9s %7s %9s %9s %7s' % ('tier', 'in', 'clone', 'error', 'out', 'clone',
                                            'error'))
    for t, i, o, ci, co in tier_rates.bytes_rows(orig_model, orig, clone, TIERS,
                                                 {x: ports[x] for x in EXTERNALS}):
        print('%-10s %9.1f %9.1f %7s %9.1f %9.1f %7s' % (
            t, i, ci, pct(tier_rates.rel(i, ci)), o, co, pct(tier_rates.rel(o, co))))


def print_edges(orig, clone):
    print('\n2. edges (kernel graph): calls per parent request, mode/order')
    print('%-18s %9s %9s %7s  %-22s %-22s' % ('edge', 'original', 'clone', 'error',
                                              'original mode/order', 'clone mode/order'))
    for key in sorted(EDGES):
        o, c = orig.get(key), clone.get(key)

        def rate(e):
            return e['calls'] / max(e['parent_requests'], 1) if e else 0.0

        def shape(e):
            return '%s/%s' % (e.get('mode'), e.get('order')) if e else 'missing'

        print('%-18s %9.3f %9.3f %7s  %-22s %-22s' % ('->'.join(key), rate(o), rate(c),
                                                       pct(tier_rates.rel(rate(o), rate(c))),
                                                       shape(o), shape(c)))


def spread(xs):
    return '%.2f [%.2f-%.2f]' % (statistics.median(xs), min(xs), max(xs))


def print_perf(perf, rounds, seconds):
    print('\n3. end to end through nginx, %d rounds interleaved original/clone, wrk %d s each: '
          'median [min-max]' % (rounds, seconds))
    print('%-10s %-4s %-8s %22s %22s %22s' % ('load', 'conn', 'metric', 'original', 'clone',
                                              'clone/original'))
    for name, conns in LOADS:
        o, c = perf[('orig', name)], perf[('clone', name)]
        for k, label in (('p50', 'p50 ms'), ('p99', 'p99 ms'), ('rps', 'req/s')):
            if name == 'saturation' and k != 'rps':
                continue
            xo = [r[k] for r in o]
            xc = [r[k] for r in c]
            ratios = [b / a for a, b in zip(xo, xc) if a > 0]
            print('%-10s %-4d %-8s %22s %22s %22s' % (name, conns, label, spread(xo), spread(xc),
                                                      spread(ratios)))


def print_paper():
    print('\n4. reference: the Ditto paper (ASPLOS\'23), its one microservice graph')
    for k, v in PAPER:
        print('   %-32s %s' % (k, v))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    cli = os.path.join(build, 'examples', 'ditto', 'ditto')
    install()
    otlp = free_port()
    with tempfile.TemporaryDirectory() as tmp, Shop(
            nginx=True, otlp_http_url='http://127.0.0.1:%d/v1/traces' % otlp,
            env={'OTEL_BSP_SCHEDULE_DELAY': '200'}) as shop:
        ports = dict(shop.ports)
        url = shop.url('/page')
        wrk(url, 2, 4)  # node's JIT warms up
        targets = {t: (shop.pids[t], ports[t]) for t in TIERS}
        orig = profile(cli, targets, os.path.join(tmp, 'orig.dm'), url, otlp)
        # Without the receiver: see tests/graph/test_graph_clone.py.
        orig2 = profile(cli, targets, os.path.join(tmp, 'orig2.dm'), url, None)
        tree = os.path.join(tmp, 'tree')
        r = subprocess.run([cli, 'synth', os.path.join(tmp, 'orig.dm'), '-o', tree],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit('synth failed: ' + r.stderr)
        ditto.build_graph(tree)
        n = len(json.load(open(os.path.join(tree, 'graph.json')))['nodes'])
        base = free_base(n)
        with ditto.up(tree, port_base=base, max_seconds=3600) as g:
            tiers = {t['name']: (t['pid'], t['port']) for t in g.tiers}
            front = 'http://%s/page' % g.front
            wrk(front, 2, 4)
            clone = profile(cli, tiers, os.path.join(tmp, 'clone.dm'), front, None)
            perf = {}
            for i in range(rounds):
                say('round %d of %d' % (i + 1, rounds))
                for name, conns in LOADS:
                    for side, u in (('orig', url), ('clone', front)):
                        perf.setdefault((side, name), []).append(wrk(u, seconds, conns))
    # The clone's redis and memcached are services; the original's are
    # externals named after their framing and port.
    rename = {'redis-%d' % ports['redis']: 'redis',
              'memcached-%d' % ports['memcached']: 'memcached'}
    o, o2 = tier_rates.services(orig), tier_rates.services(orig2)
    c = tier_rates.services(clone, rename)
    print('graph accuracy: the traced shop behind nginx and its clone (%s)' %
          time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))
    print_syscalls(o, o2, c)
    print_bytes(orig, o, c, ports)
    print_edges(kernel_edges(orig, rename), kernel_edges(clone, rename))
    print_perf(perf, rounds, seconds)
    print_paper()


if __name__ == '__main__':
    main()
