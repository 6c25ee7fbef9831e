#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Original vs. clone, side by side (bench/clone-compare.sh).

For each service (redis-server under redis-benchmark, memcached under
memcaslap, the ground-truth servers of tests/servers under srv_client):
  1. `ditto clone` profiles the original under load and builds its clone;
  2. the clone runs under the same load and is profiled the same way;
  3. `ditto model diff` metrics are summarised: thread classes and network
     model, syscalls and bytes per request, instruction mix, branch and
     working-set distances;
  4. original and clone run under `valgrind --tool=cachegrind --cache-sim=yes
     --branch-sim=yes` with the same short load: I1/D1/LL miss rates and the
     branch misprediction rate side by side, with relative errors.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'synth'))

from compare import (classes, clone_service, diff, network, per_request,  # noqa: E402
                     profile_clone, rel)
from harness import Clone, Service, free_port, need, stop  # noqa: E402

SERVERS = os.environ.get('DITTO_SERVERS_DIR', 'build/tests/servers')
GEOMETRY = ['--I1=32768,8,64', '--D1=32768,8,64', '--LL=1048576,16,64']


def redis(port):
    return [need('redis-server'), '--port', str(port), '--bind', '127.0.0.1', '--save', '',
            '--appendonly', 'no']


def redis_load(port, n=3000000):
    return [need('redis-benchmark'), '-p', str(port), '-n', str(n), '-c', '20', '-t',
            'get,set', '-q']


def memcached(port):
    return [need('memcached'), '-p', str(port), '-l', '127.0.0.1', '-U', '0', '-t', '4', '-u',
            'root']


def memcached_load(port, n=None, seconds=12):
    if n:
        seconds = 3
    return [need('memcaslap'), '-s', '127.0.0.1:%d' % port, '-t', '%ds' % seconds, '-c', '16']


def gt(name):
    return lambda port: [os.path.join(SERVERS, name), '--port', str(port), '--max-seconds',
                         '300']


def gt_load(port, n=10 ** 7):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections', '8',
            '--requests', str(n), '--request-bytes', '64', '--max-seconds', '60']


SERVICES = {
    'redis': (redis, redis_load, 'redis-server', 20000),
    'memcached': (memcached, memcached_load, 'memcached', 1),
}
for _gt in ('srv_epoll', 'srv_epoll_pool', 'srv_prefork', 'srv_poll', 'srv_select',
            'srv_blocking', 'srv_busypoll'):
    SERVICES[_gt] = (gt(_gt), gt_load, _gt, 20000)


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


def compare_one(name, tmp):
    start, load, svc_name, cg_requests = SERVICES[name]
    port = free_port()
    orig = Service(start(port), port)
    tree = os.path.join(tmp, name + '-clone')
    try:
        model = clone_service(orig.pid, tree, load(port))
    finally:
        orig.stop()
    clone = Clone(tree)
    try:
        cmodel = profile_clone(clone, svc_name, os.path.join(tmp, name + '-clone-profile.msgpack'),
                               load(clone.port))
    finally:
        clone.stop()
    print('== %s' % name)
    print('  thread classes   %s   original %s  clone %s' % (
        'same' if classes(model) == classes(cmodel) else 'DIFFER', classes(model), classes(cmodel)))
    print('  network model    %s' % ('same' if network(model) == network(cmodel) else
                                     'DIFFER: %s vs %s' % (network(model), network(cmodel))))
    co, rqo, rso = per_request(model)
    cc, rqc, rsc = per_request(cmodel)
    print('  %-40s %10s %10s %8s' % ('per request', 'original', 'clone', 'rel err'))
    for key in sorted(set(co) | set(cc)):
        a, b = co.get(key, 0.0), cc.get(key, 0.0)
        if max(a, b) >= 0.01:
            print('  %-40s %10.3f %10.3f %7.1f%%' % (':'.join(key), a, b, 100 * rel(a, b)))
    print('  %-40s %10.1f %10.1f %7.1f%%' % ('response bytes', rso, rsc, 100 * rel(rso, rsc)))
    print('  %-40s %10.1f %10.1f %7.1f%%' % ('request bytes (client)', rqo, rqc, 100 * rel(rqo, rqc)))
    metrics = diff(model, cmodel)
    for key in ('mix', 'branches', 'dws', 'iws', 'raw', 'insts_per_request'):
        hits = [m for p, m in metrics.items() if re.search(r'\.cpu\[[^]]*\]\.%s$' % key, p)]
        for m in hits:
            print('  %-40s %s distance %.3f' % ('cpu ' + key, m['kind'], m['error']))
    cg_port, cg_cport = free_port(), free_port()
    a = cachegrind(start(cg_port), cg_port, load(cg_port, cg_requests))
    b = cachegrind([os.path.join(tree, 'clone'), '--port', str(cg_cport)], cg_cport,
                   load(cg_cport, cg_requests))
    print('  %-40s %10s %10s %8s' % ('cachegrind', 'original', 'clone', 'rel err'))
    for k in ('I1', 'D1', 'LL', 'branch'):
        print('  %-40s %9.3f%% %9.3f%% %7.1f%%' % (k + (' mispredict rate' if k == 'branch' else
                                                       ' miss rate'), 100 * a[k], 100 * b[k],
                                                  100 * rel(a[k], b[k])))
    print()


if __name__ == '__main__':
    names = sys.argv[1:] or list(SERVICES)
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            compare_one(n, tmp)
