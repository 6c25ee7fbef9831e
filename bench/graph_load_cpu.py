#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU time per front request of each tier of the traced shop (real node,
redis, memcached, nginx: tests/graph/shop.py) at several open-loop rates
(`ditto load --mode poisson`, 16 connections): does a tier's CPU per
request depend on its load (issue 21: the clone graph's latency rises
with load where the original's falls, and a clone tier's CPU per request
is the same at every load)? Rounds interleave the rates; each cell is the
median and the spread (min-max) over the rounds.

Usage: graph_load_cpu.py [--rates 20,60,100] [--rounds 3] [--seconds 6]
       (root; DITTO_CLI: the ditto binary)"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'graph'))
from shop import Shop, install  # noqa: E402

CLI = os.environ.get('DITTO_CLI', 'ditto')


def cpu_ns(pid):
    """CPU time of pid and its descendants, every thread: the first field
    of each task's schedstat (ns; /proc/PID/stat counts 10 ms ticks)."""
    total = 0
    for p in [pid] + descendants(pid):
        try:
            tids = os.listdir('/proc/%d/task' % p)
        except OSError:
            continue
        for t in tids:
            try:
                total += int(open('/proc/%d/task/%s/schedstat' % (p, t)).read().split()[0])
            except OSError:
                pass
    return total


def descendants(pid):
    """pid's descendants, from one pass over /proc."""
    children = {}
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                ppid = int(open('/proc/%s/stat' % p).read().rsplit(')', 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def load(port, qps, seconds):
    r = subprocess.run([CLI, 'load', '--port', str(port), '--framing', 'http1', '--path',
                        '/page', '--mode', 'poisson', '--qps', str(qps), '-c', '16', '-d',
                        str(seconds), '--json'],
                       capture_output=True, text=True, timeout=seconds + 60)
    return json.loads(r.stdout)


def measure(pids, port, qps, seconds):
    before = {t: cpu_ns(p) for t, p in pids.items()}
    res = load(port, qps, seconds)
    after = {t: cpu_ns(p) for t, p in pids.items()}
    n = max(res['completed'], 1)
    return {t: (after[t] - before[t]) / n for t in pids}, res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rates', default='20,60,100')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--seconds', type=float, default=6)
    a = ap.parse_args()
    install()
    rates = [int(x) for x in a.rates.split(',')]
    cells = {}
    with Shop(nginx=True) as shop:
        pids = {t: shop.pids[t] for t in ('nginx', 'front', 'back', 'audit')}
        port = shop.ports['nginx']
        for rnd in range(a.rounds):
            for q in rates:
                per, res = measure(pids, port, q, a.seconds)
                for t, v in per.items():
                    cells.setdefault((t, q), []).append(v)
                cells.setdefault(('p50_ms', q), []).append(res['latency_ns']['p50'] / 1e6)
                print('round %d qps %d: %s' % (rnd, q, json.dumps(
                    {t: round(v / 1e3) for t, v in per.items()})), flush=True)
    print('%-8s' % 'tier' + ''.join('%22s' % ('%d req/s' % q) for q in rates))
    for t in ('nginx', 'front', 'back', 'audit', 'p50_ms'):
        row = '%-8s' % t
        for q in rates:
            v = sorted(cells[(t, q)])
            div = 1 if t == 'p50_ms' else 1e3
            fmt = '%.1f (%.1f-%.1f)' if t == 'p50_ms' else '%.0f (%.0f-%.0f)'
            row += '%22s' % (fmt % (v[len(v) // 2] / div, v[0] / div, v[-1] / div))
        print(row)
    print('(tiers: CPU us per front request, median (min-max) of %d rounds)' % a.rounds)


if __name__ == '__main__':
    main()
