# SPDX-License-Identifier: MIT
"""Clones of the ground-truth servers (tests/servers, one per network
model): each is cloned under srv_client, its clone is loaded by the same
client, and original and clone, profiled the same way, have the same thread
classes, network model, socket calls per request and response bytes, and
under the same load the same process tree (issue 18, items 1 and 2: the
number of processes, and of threads in each, counted from /proc).
Throughputs of both are printed (srv_client's requests per second)."""

import json
import os
import subprocess

import pytest

from compare import (classes, clone_service, network, per_request, profile_clone, rel,
                     tree_while, woken_by)
from conftest import Clone, Service, free_port

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

SERVERS = os.environ.get('DITTO_SERVERS_DIR', '')
CASES = {
    'srv_epoll': ([], 4),
    'srv_epoll_pool': (['--threads', '3'], 6),
    'srv_prefork': (['--threads', '3'], 3),
    # a master in select forking a process per connection (PostgreSQL's shape)
    'srv_forking': ([], 4),
    'srv_poll': ([], 4),
    'srv_select': ([], 4),
    'srv_blocking': ([], 4),
    'srv_busypoll': ([], 4),
    'srv_futex_pool': (['--threads', '3'], 6),
}
# Loads paced while profiled, for servers whose serving processes each hold
# one connection: srv_client's closed loop at full speed on a 2-core host
# gives some connections 2 to 2.5 times the requests of others (measured
# with srv_prefork and srv_forking alike), and the profiler's weighted
# call-tree distance (classify.c, SPLIT_THRESHOLD 0.4: about 2.3 to 1) then
# splits the children into two network classes, in the original or the
# clone, at random. Paced, every connection gets its share. srv_blocking's
# threads per connection split the same way (a check run: network 1 + 3).
PACED = {
    'srv_forking': ['--rate', '20000'],
    'srv_blocking': ['--rate', '20000'],
}
# Classes known by construction (role, count, io model), checked in the
# original's model as well as in the clone's: srv_futex_pool's pool reads
# non-blocking sockets but sleeps on a futex until its listener (the main
# thread, in epoll_wait) hands it a connection: a blocking pool, not
# busy-polling threads. srv_forking: its master in select, and one
# single-threaded child per connection, woken by its client alone.
EXPECTED_CLASSES = {
    'srv_futex_pool': [('acceptor', 1, 'epoll'), ('network', 3, 'blocking')],
    'srv_forking': [('acceptor', 1, 'select'), ('network', 4, 'epoll')],
}
NETWORK_WOKEN_BY = {
    'srv_futex_pool': ['acceptor'],
    'srv_forking': [],
}
# Trees known by construction (threads of the main process, sorted thread
# counts of its children) for conns connections, checked in the original
# as well as in the clone: srv_forking's master has one thread and one
# single-threaded child per open connection.
EXPECTED_TREES = {
    'srv_forking': lambda conns: (1, [1] * conns),
}


def client(port, connections, requests=10 ** 7, seconds=60):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections',
            str(connections), '--requests', str(requests), '--request-bytes', '100',
            '--response-bytes', '128', '--max-seconds', str(seconds)]


def client_any(port, connections, requests=10 ** 7, seconds=60):
    """srv_client checking only that whole length-prefixed answers come."""
    return [a for a in client(port, connections, requests, seconds)
            if a not in ('--response-bytes', '128')]



def tree_under_load(port, conns, pid):
    """The process tree of pid while conns connections of load are open."""
    return tree_while(client_any(port, conns, seconds=5), pid)

def throughput(port, conns):
    """Requests per second of 20000 closed-loop requests."""
    r = subprocess.run(client_any(port, conns, requests=20000, seconds=30),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    out = json.loads(r.stdout.decode().strip().splitlines()[-1])
    return out['requests'] / out['seconds'] if out['seconds'] else 0.0


# Calls per request within 5%, but for a busy-polling loop: how many rounds
# it goes per request (one failed accept4 and a read per connection each)
# follows how the spinning thread and its 4 clients share 2 cores, and
# the original's own accept4 per request ranged 0.263-0.312 over five runs
# of this test (reads 1.13-1.17): its clone is held to what the original
# does against itself. srv_futex_pool's pool reads until EAGAIN: about 0.7
# of its 1.7 reads per request find nothing, as many as its wake-ups, and
# those follow how requests batch up between two wake-ups. The original
# made 1.70-1.77 reads per request over five runs (CI's one of 1.70), its
# clone 1.77-1.80 when it read on after every request (one empty read per
# wake-up, plus those the model still owed). It now reads on only while
# the model owes empty reads (1.799 against 1.799 in a bench run); the
# 8% stays until more runs show the spread.
CALLS_BOUND = {'srv_busypoll': 0.12, 'srv_futex_pool': 0.08}

# Known differences, shown as xfails (none at present: issue 18's
# srv_blocking, srv_epoll_pool and srv_busypoll ones are fixed).
KNOWN = {}


def case(name):
    if name in KNOWN:
        return pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN[name], strict=False))
    return name


@pytest.mark.parametrize('name', [case(n) for n in sorted(CASES)])
def test_ground_truth_clone_has_the_same_network_shape(tmp_path, started, name):
    args, conns = CASES[name]
    port = free_port()
    srv = Service([os.path.join(SERVERS, name), '--port', str(port), '--response-bytes', '128',
                   '--max-seconds', '120'] + args, port)
    started.append(srv)
    tree_dir = tmp_path / 'clone'
    # Each is profiled first, as it starts, and its tree and throughput
    # are read after: the profiles see what they saw before the two tests
    # were one.
    orig = clone_service(srv.pid, tree_dir, client(port, conns) + PACED.get(name, []), duration=2.5,
                         windows=0)
    orig_tree = tree_under_load(port, conns, srv.pid)
    orig_qps = throughput(port, conns)
    srv.stop()
    clone = Clone(tree_dir)
    started.append(clone)
    # Not clone.msgpack: that is the original's model (clone_service()).
    cm = profile_clone(clone, name, str(tmp_path / 'clone-profile.msgpack'),
                       client_any(clone.port, conns) + PACED.get(name, []), duration=2.5,
                       windows=0)
    clone_tree = tree_under_load(clone.port, conns, clone.pid)
    clone_qps = throughput(clone.port, conns)
    assert clone.stop() == 0
    print('%s: original %s %.0f req/s, clone %s %.0f req/s (%.2f)' %
          (name, orig_tree, orig_qps, clone_tree, clone_qps,
           clone_qps / orig_qps if orig_qps else 0))
    if name in EXPECTED_TREES:
        assert orig_tree == EXPECTED_TREES[name](conns)
    assert clone_tree == orig_tree
    assert network(orig) == network(cm)
    assert classes(orig) == classes(cm)
    if name in EXPECTED_CLASSES:
        assert classes(orig) == EXPECTED_CLASSES[name]
        assert woken_by(orig, 'network') == NETWORK_WOKEN_BY[name]
    calls_o, _, resp_o = per_request(orig)
    calls_c, _, resp_c = per_request(cm)
    for key, rate in calls_o.items():
        if key[2] == 'tcp' and rate >= 0.05:
            assert key in calls_c and rel(rate, calls_c[key]) <= CALLS_BOUND.get(name, 0.05), (
                key, rate, calls_c)
    assert rel(resp_o, resp_c) <= 0.05
