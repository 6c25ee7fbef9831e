#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Accuracy of tuned clones against the Ditto paper (bench/accuracy.sh).

For each service (redis-server under redis-benchmark, memcached under
memcaslap; or a ground-truth server of tests/servers under srv_client):
  1. `ditto clone` profiles the original under its load generator and
     writes the clone;
  2. `ditto tune` measures the original (restarted on a free port) and the
     clone under cachegrind with one load generator, tunes the clone, and
     loads both natively at rising rates (--latency);
  3. its report is printed next to the paper's average errors, with the
     JSON and the latency plot kept in bench/out/.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'synth'))

from clone_compare import SERVICES  # noqa: E402
from compare import clone_service  # noqa: E402
from harness import Service, ditto, free_port  # noqa: E402

OUT = os.path.join(HERE, 'out')
# Ditto (ASPLOS 2023), average relative errors of its clones.
PAPER = [('IPC', 0.041), ('branch mispredictions', 0.099), ('L1i', 0.071), ('L1d', 0.051),
         ('L2', 0.069), ('LLC', 0.121), ('network/disk bandwidth', 0.001)]
# Our rows that stand closest to each of the paper's (cachegrind has no L2:
# its LL, 1 MiB here, plays L2 and LLC).
OURS = {'IPC': 'insts_per_request', 'branch mispredictions': 'branch_mispredict_rate',
        'L1i': 'i1_miss_rate', 'L1d': 'd1_miss_rate', 'L2': 'll_miss_rate',
        'LLC': 'll_miss_rate', 'network/disk bandwidth': 'socket_bytes_per_request'}


def tune_one(name, tmp):
    start, load, _, _ = SERVICES[name]
    port = free_port()
    srv = Service(start(port), port)
    try:
        model = clone_service(srv.pid, os.path.join(tmp, name), load(port), duration=4,
                              windows=8)
    finally:
        srv.stop()
    port = free_port()
    report = os.path.join(OUT, name + '.json')
    r = ditto('tune', model, '-o', os.path.join(tmp, name + '-tuned'), '-i', '9', '--latency',
              '--json', report, '--plot', os.path.join(OUT, name + '-latency.svg'),
              '--save', os.path.join(OUT, name + '-tuned.msgpack'),
              '--original-port', port, '--', *start(port), timeout=1800)
    sys.stdout.write(r.stdout)
    with open(report) as f:
        return json.load(f)


def summary(name, rep):
    rows = {row['metric']: row for row in rep['rows']}
    print('\n%s: %s after %d iterations' % (name, 'converged' if rep['converged'] else
                                            'NOT converged', rep['iterations']))
    print('  %-24s %-26s %10s %10s' % ('paper metric', 'ours', 'paper', 'ours'))
    for paper, err in PAPER:
        ours = OURS[paper]
        got = rows.get(ours, {}).get('error')
        print('  %-24s %-26s %9.1f%% %10s' % (paper, ours, 100 * err,
                                               '-' if got is None else '%.1f%%' % (100 * got)))
    for key in ('syscalls_per_request', 'p99_ns_low', 'p99_ns_medium', 'saturation_qps'):
        if key in rows:
            print('  %-24s %-26s %10s %9.1f%%' % ('', key, '', 100 * rows[key]['error']))


def main():
    names = sys.argv[1:] or ['redis', 'memcached']
    os.makedirs(OUT, exist_ok=True)
    reports = {}
    with tempfile.TemporaryDirectory(prefix='ditto-accuracy-') as tmp:
        for name in names:
            print('== %s' % name, flush=True)
            reports[name] = tune_one(name, tmp)
    for name, rep in reports.items():
        summary(name, rep)
    print('\nreports and plots: %s' % OUT)


if __name__ == '__main__':
    main()
