#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Original vs. clone, side by side (bench/clone-compare.sh).

For each service of bench/compare_targets.py (redis-server under
redis-benchmark, memcached under memcaslap, nginx under wrk, PostgreSQL
under pgbench, MariaDB under sysbench, Apache under wrk, the ground-truth
servers of tests/servers under srv_client):
  1. `ditto clone` profiles the original under load and builds its clone;
  2. the clone runs under the same load and is profiled the same way;
  3. `ditto model diff` metrics are summarised: thread classes and network
     model, syscalls and bytes per request, instruction mix, branch and
     working-set distances; the original is profiled a second time under
     the same load, and its syscalls per request against its own first
     profile give the error a profile of the same service makes;
  4. both run at once and `ditto load` drives each in turn, closed loop, in
     rounds interleaved: the throughput ratio clone/original per round;
  5. with --tune, the clone compared is `ditto tune MODEL` of that profile
     (the original is not run: targets from the model, as for a service
     that cannot be restarted);
  6. with --cachegrind, the ground-truth servers and their clones run under
     `valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes` with the
     same short load: I1/D1/LL miss rates and the branch misprediction rate.
Then one table, a row per service: shape match (thread classes and network
model), the worst syscalls-per-request error by kind, the same for the
original against itself, the bytes-per-request error, and the throughput
ratio (median and spread of the rounds).
Exit status 1 if a service could not be compared (its row says FAILED).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'synth'))
sys.path.insert(0, HERE)

from compare import (classes, clone_service, diff, network, per_request,  # noqa: E402
                     profile_clone, rel)
from compare_targets import TARGETS  # noqa: E402
from harness import Clone, ditto, free_port, stop  # noqa: E402

import ditto as d  # noqa: E402

GEOMETRY = ['--I1=32768,8,64', '--D1=32768,8,64', '--LL=1048576,16,64']
ROUNDS = 3


def cachegrind(argv, port, load):
    """Miss and misprediction rates of argv's whole run under load."""
    cg = subprocess.Popen(['valgrind', '--tool=cachegrind', '--cache-sim=yes', '--branch-sim=yes',
                           '--cachegrind-out-file=/dev/null'] + GEOMETRY + argv,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        import socket
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(('127.0.0.1', port)) == 0:
                    break
            time.sleep(0.2)
        subprocess.run(load, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    finally:
        stop(cg, 60) if cg.poll() is None else None
    out = cg.stderr.read().decode()

    def field(name):
        m = re.search(name + r':\s+([\d,]+)', out)
        return int(m.group(1).replace(',', '')) if m else 0
    irefs, drefs, brs = field(r'I\s+refs'), field(r'D\s+refs'), field(r'Branches')
    return {'I1': field(r'I1\s+misses') / max(irefs, 1), 'D1': field(r'D1\s+misses') / max(drefs, 1),
            'LL': field(r'LL misses') / max(irefs + drefs, 1),
            'branch': field(r'Mispredicts') / max(brs, 1)}


def throughput(model, port, clients):
    """Closed-loop rate of `ditto load` in the model's framing (clients connections, 2 s)."""
    r = ditto('load', '--model', model, '--port', port, '-c', clients, '-d', 2, '--json',
              check=False)
    if r.returncode != 0:
        # a rate of 0 would read as a measurement: the row says FAILED
        raise RuntimeError('ditto load on port %d: status %d: %s'
                           % (port, r.returncode, r.stderr.strip()[-200:]))
    return json.loads(r.stdout)['achieved_qps']


def throughputs(t, model, orig_port, clone_port):
    """Rounds interleaved, original then clone: their rates and the ratios
    (by the target's own generator where `ditto load` lacks its framing)."""
    def rate(port):
        return t.rate(port) if t.rate else throughput(model, port, t.clients)
    rows = []
    for _ in range(ROUNDS):
        a, b = rate(orig_port), rate(clone_port)
        rows.append((a, b, b / a if a else 0.0))
    return rows


def call_errors(model, cmodel):
    """The largest relative error of calls per request over the kinds
    either side makes at least 0.01 of, and that kind."""
    co, rqo, rso = per_request(model)
    cc, rqc, rsc = per_request(cmodel)
    worst = (0.0, '-')
    for key in set(co) | set(cc):
        a, b = co.get(key, 0.0), cc.get(key, 0.0)
        if max(a, b) >= 0.01:
            worst = max(worst, (rel(a, b), ':'.join(key)))
    return worst, max(rel(rso, rsc), rel(rqo, rqc)), (co, cc, rqo, rqc, rso, rsc)


def cpu_per_request(model):
    """Microseconds of CPU per request of each thread class (all its threads)."""
    m = d.Model.load(model)
    n = m.get('services[0].requests')['count'] or 1
    return {t['name']: t.get('cpu_ns', 0) / n / 1000 for t in m.get('services[0].threads')}


def details(name, model, cmodel, calls, again):
    """again: the original's second profile's calls per request."""
    co, cc, rqo, rqc, rso, rsc = calls
    print('== %s' % name)
    print('  thread classes   %s   original %s  clone %s' % (
        'same' if classes(model) == classes(cmodel) else 'DIFFER', classes(model), classes(cmodel)))
    print('  network model    %s' % ('same' if network(model) == network(cmodel) else
                                     'DIFFER: %s vs %s' % (network(model), network(cmodel))))
    print('  %-40s %10s %10s %8s %10s %8s' % ('per request', 'original', 'clone', 'rel err',
                                             'again', 'rel err'))
    for key in sorted(set(co) | set(cc) | set(again)):
        a, b, c = co.get(key, 0.0), cc.get(key, 0.0), again.get(key, 0.0)
        if max(a, b, c) >= 0.01:
            print('  %-40s %10.3f %10.3f %7.1f%% %10.3f %7.1f%%' % (
                ':'.join(key), a, b, 100 * rel(a, b), c, 100 * rel(a, c)))
    co_cpu, cc_cpu = cpu_per_request(model), cpu_per_request(cmodel)
    for k in sorted(set(co_cpu) | set(cc_cpu)):
        a, b = co_cpu.get(k, 0.0), cc_cpu.get(k, 0.0)
        print('  %-40s %10.2f %10.2f %7.1f%%' % (k + ' CPU us/request', a, b, 100 * rel(a, b)))
    print('  %-40s %10.1f %10.1f %7.1f%%' % ('response bytes', rso, rsc, 100 * rel(rso, rsc)))
    print('  %-40s %10.1f %10.1f %7.1f%%' % ('request bytes (client)', rqo, rqc,
                                              100 * rel(rqo, rqc)))
    metrics = diff(model, cmodel)
    for key in ('mix', 'branches', 'dws', 'iws', 'raw', 'insts_per_request'):
        hits = [m for p, m in metrics.items() if re.search(r'\.cpu\[[^]]*\]\.%s$' % key, p)]
        for m in hits:
            print('  %-40s %s distance %.3f' % ('cpu ' + key, m['kind'], m['error']))


def cache_rows(t, tree):
    cg_port, cg_cport = free_port(), free_port()
    a = cachegrind(t.argv(cg_port), cg_port, t.load(cg_port, 20000))
    b = cachegrind([os.path.join(tree, 'clone'), '--port', str(cg_cport)], cg_cport,
                   t.load(cg_cport, 20000))
    print('  %-40s %10s %10s %8s' % ('cachegrind', 'original', 'clone', 'rel err'))
    for k in ('I1', 'D1', 'LL', 'branch'):
        print('  %-40s %9.3f%% %9.3f%% %7.1f%%' % (k + (' mispredict rate' if k == 'branch' else
                                                       ' miss rate'), 100 * a[k], 100 * b[k],
                                                  100 * rel(a[k], b[k])))


def tuned(model, tree):
    """`ditto tune` of model without the original, into tree-tuned."""
    out = tree + '-tuned'
    r = ditto('tune', model, '-o', out, '-i', '8', '-n', '5000', check=False, timeout=1800)
    if r.returncode not in (0, 3):
        raise RuntimeError('ditto tune: exit %d: %s' % (r.returncode, r.stderr[-400:]))
    print('  tune: %s' % [line for line in r.stdout.splitlines() if line.startswith('verdict')])
    return out


def compare_one(t, tmp, with_cache, with_tune=False):
    """Profile, clone, profile the clone, then rates side by side: a row."""
    orig = t.start(free_port())
    tree = os.path.join(tmp, t.name + '-clone')
    try:
        model = clone_service(orig.pid, tree, t.load(orig.port))
        if with_tune:
            tree = tuned(model, tree)
        again = profile_clone(orig, t.svc_name, os.path.join(tmp, t.name + '-again.msgpack'),
                              t.load(orig.port), windows=0)
        clone = Clone(tree)
        try:
            cmodel = profile_clone(clone, t.svc_name,
                                   os.path.join(tmp, t.name + '-clone-profile.msgpack'),
                                   t.load(clone.port))
            rates = throughputs(t, model, orig.port, clone.port)
        finally:
            clone.stop()
    finally:
        orig.stop()
    (calls_err, worst), bytes_err, calls = call_errors(model, cmodel)
    (self_err, self_worst), _, again_calls = call_errors(model, again)
    details(t.name, model, cmodel, calls, again_calls[1])
    ratios = sorted(r for _, _, r in rates)
    print('  throughput (%s, %d rounds interleaved): original %s, clone %s' % (
        'its own load generator' if t.rate else 'ditto load', ROUNDS, ' '.join('%.0f' % a for a, _, _ in rates), ' '.join('%.0f' % b for _, b, _ in rates)))
    if with_cache and t.argv:
        cache_rows(t, tree)
    print()
    shape = classes(model) == classes(cmodel) and network(model) == network(cmodel)
    return (t.name, 'yes' if shape else 'NO', calls_err, worst, self_err, self_worst, bytes_err,
            ratios[len(ratios) // 2], ratios[0], ratios[-1])


def table(rows):
    print('| service | shape match | syscalls/request error (worst kind) | original against '
          'itself | bytes/request error | throughput clone/original (median, min-max of %d) |'
          % ROUNDS)
    print('|---|---|---|---|---|---|')
    for name, shape, err, worst, serr, sworst, berr, med, lo, hi in rows:
        print('| %s | %s | %.1f%% (%s) | %.1f%% (%s) | %.1f%% | %.2f (%.2f-%.2f) |' % (
            name, shape, 100 * err, worst, 100 * serr, sworst, 100 * berr, med, lo, hi))


def main(argv):
    with_cache = '--cachegrind' in argv
    with_tune = '--tune' in argv
    keep = [a.split('=', 1)[1] for a in argv if a.startswith('--keep=')]
    names = [a for a in argv if not a.startswith('--')]
    known = {t.name: t for t in TARGETS}
    for n in names:
        if n not in known:
            sys.exit('clone-compare: unknown service %r (one of: %s)' % (n, ' '.join(known)))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if keep:
            tmp = keep[-1]
            os.makedirs(tmp, exist_ok=True)
        for t in [known[n] for n in names] or TARGETS:
            try:
                rows.append(compare_one(t, tmp, with_cache, with_tune))
            except Exception as e:      # one service failing does not hide the others
                print('== %s: FAILED: %s\n' % (t.name, e))
                rows.append((t.name, 'FAILED', 0.0, str(e)[:60], 0.0, '-', 0.0, 0.0, 0.0, 0.0))
    table(rows)
    return 1 if any(r[1] == 'FAILED' for r in rows) else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
