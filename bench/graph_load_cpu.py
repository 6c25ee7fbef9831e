#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU time per front request of each tier of the traced shop (real node,
redis, memcached, nginx: tests/graph/shop.py) at several open-loop rates
(`ditto load --mode poisson`, 16 connections): does a tier's CPU per
request depend on its load (issue 21: the clone graph's latency rises
with load where the original's falls, and a clone tier's CPU per request
is the same at every load)? Rounds interleave the rates; each cell is the
median and the spread (min-max) over the rounds.

With --clone DIR, a clone tree of the shop (ditto tune or ditto synth of
its model, built) runs beside the original, `ditto up` as a user would,
each round measuring the two graphs in turn (which one first alternates),
and the last lines set each tier's CPU per request at the highest rate
over the lowest's, original against clone.

Usage: graph_load_cpu.py [--rates 20,60,100] [--rounds 3] [--seconds 6] [--clone DIR]
       (root; DITTO_CLI: the ditto binary)"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'graph'))
from shop import Shop, install  # noqa: E402
import ditto  # noqa: E402

TIERS = ('nginx', 'front', 'back', 'audit')

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
                        '/page', '--write-share', '0', '--mode', 'poisson', '--qps', str(qps), '-c', '16', '-d',
                        str(seconds), '--json'],
                       capture_output=True, text=True, timeout=seconds + 60)
    return json.loads(r.stdout)


def warm(port, seconds):
    if seconds > 0:
        subprocess.run([CLI, 'load', '--port', str(port), '--framing', 'http1', '--path', '/page',
                        '--write-share', '0', '-c', '1', '-d', str(seconds)],
                       capture_output=True, timeout=seconds + 60)


def measure(pids, port, qps, seconds):
    before = {t: cpu_ns(p) for t, p in pids.items()}
    res = load(port, qps, seconds)
    after = {t: cpu_ns(p) for t, p in pids.items()}
    n = max(res['completed'], 1)
    return {t: (after[t] - before[t]) / n for t in pids}, res


def table(cells, rates, label, rounds):
    print('%s:' % label)
    print('%-8s' % 'tier' + ''.join('%22s' % ('%d req/s' % q) for q in rates))
    for t in TIERS + ('p50_ms',):
        row = '%-8s' % t
        for q in rates:
            v = sorted(cells[(t, q)])
            div = 1 if t == 'p50_ms' else 1e3
            fmt = '%.1f (%.1f-%.1f)' if t == 'p50_ms' else '%.0f (%.0f-%.0f)'
            row += '%22s' % (fmt % (v[len(v) // 2] / div, v[0] / div, v[-1] / div))
        print(row)
    print('(tiers: CPU us per front request, median (min-max) of %d rounds)' % rounds)


def slopes(cells, rates):
    """Per tier, the median CPU per request at the highest rate over the
    lowest's."""
    med = {k: sorted(v)[len(v) // 2] for k, v in cells.items()}
    return {t: med[(t, rates[-1])] / med[(t, rates[0])] for t in TIERS}


def measure_side(side, pids, port, rates, rnd, seconds):
    for q in rates:
        per, res = measure(pids, port, q, seconds)
        for t, v in per.items():
            side.setdefault((t, q), []).append(v)
        side.setdefault(('p50_ms', q), []).append(res['latency_ns']['p50'] / 1e6)
        print('round %d qps %d: %s' % (rnd, q, json.dumps(
            {t: round(v / 1e3) for t, v in per.items()})), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rates', default='20,60,100')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--seconds', type=float, default=6)
    ap.add_argument('--warm', type=float, default=20,
                    help='seconds of closed-loop load on each graph before the rounds: node '
                    'compiles for tens of seconds, at two to three times its later CPU per '
                    'request')
    ap.add_argument('--clone', help='a built clone tree of the shop (ditto synth/tune -o DIR): '
                    'measured too, in the same rounds')
    a = ap.parse_args()
    install()
    rates = [int(x) for x in a.rates.split(',')]
    orig, clone = {}, {}
    with Shop(nginx=True) as shop:
        pids = {t: shop.pids[t] for t in TIERS}
        up = ditto.up(a.clone) if a.clone else None
        try:
            cpids = {t['name']: t['pid'] for t in up.tiers} if up else {}
            cport = int(up.front.rsplit(':', 1)[1]) if up else 0
            for port in [shop.ports['nginx']] + ([cport] if up else []):
                warm(port, a.warm)
            for rnd in range(a.rounds):
                # which graph goes first alternates between rounds
                sides = [('original', orig, pids, shop.ports['nginx'])]
                if up:
                    sides.append(('clone', clone, {t: cpids[t] for t in TIERS}, cport))
                for name, side, p, port in sides[rnd % len(sides):] + sides[:rnd % len(sides)]:
                    print(name, flush=True)
                    measure_side(side, p, port, rates, rnd, a.seconds)
        finally:
            if up:
                up.stop()
                up.close()
    table(orig, rates, 'original', a.rounds)
    if up:
        table(clone, rates, 'clone', a.rounds)
        so, sc = slopes(orig, rates), slopes(clone, rates)
        print('CPU per request at %d req/s over %d req/s:' % (rates[-1], rates[0]))
        for t in TIERS:
            print('%-8s original %.2f  clone %.2f' % (t, so[t], sc[t]))


if __name__ == '__main__':
    main()
