# SPDX-License-Identifier: MIT
"""The profiler on our own servers, one per network model, whose behaviour
is known by construction (tests/servers/README.md): the network model,
thread classes and per-request syscall counts must come back."""

import os
import subprocess
import sys

import pytest

import ditto
from conftest import free_port, per_request, profile_during, thread_classes

SERVERS = os.environ.get('DITTO_SERVERS_DIR', '')
REQUESTS = 4000
BYTES = 100            # request payload; 4-byte length prefix on the wire
RESPONSE = 128

# name: (server args, connections, expected network model, mux syscall)
CASES = {
    'srv_blocking': ([], 4, dict(io_model='blocking', accept_dispatch=False,
                                 network_dispatch=True, network_threads=0, processes=1), None),
    'srv_busypoll': ([], 4, dict(io_model='nonblocking', accept_dispatch=False,
                                 network_dispatch=False, network_threads=1, processes=1), None),
    'srv_epoll': ([], 4, dict(io_model='epoll', accept_dispatch=False, network_dispatch=False,
                              network_threads=1, processes=1), 'epoll_wait:epoll'),
    'srv_epoll_pool': (['--threads', '3'], 6, dict(io_model='epoll', accept_dispatch=False,
                                                   network_dispatch=True, network_threads=3,
                                                   processes=1), 'epoll_wait:epoll'),
    'srv_prefork': (['--threads', '3'], 3, dict(io_model='blocking', accept_dispatch=True,
                                                network_dispatch=False, network_threads=3,
                                                processes=3), None),
    'srv_poll': ([], 4, dict(io_model='poll', accept_dispatch=False, network_dispatch=False,
                             network_threads=1, processes=1), 'poll:none'),
    'srv_select': ([], 4, dict(io_model='select', accept_dispatch=False, network_dispatch=False,
                               network_threads=1, processes=1), 'pselect6:none'),
}


def start(server_factory, name, args):
    exe = os.path.join(SERVERS, name)
    if not os.access(exe, os.X_OK):
        pytest.fail('%s not built (DITTO_SERVERS_DIR=%r)' % (name, SERVERS))
    port = free_port()
    return server_factory([exe, '--port', str(port), '--response-bytes', str(RESPONSE),
                           '--max-seconds', '60'] + args, port)


def client(port, connections):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections',
            str(connections), '--requests', str(REQUESTS), '--request-bytes', str(BYTES),
            '--response-bytes', str(RESPONSE)]


def single_bucket(model, path):
    """(lo, hi) of a histogram that must have exactly one bucket."""
    h = model.get(path)
    assert len(h['buckets']) == 1, (path, h)
    lo, hi, _ = h['buckets'][0]
    return lo, hi


def profile_preconnected(pid, load_argv, duration):
    """Profile pid while load_argv runs, its clients connected before the
    window opens (srv_client --hold: connect, wait for a line on stdin,
    then load): the window sees no accept, only connections that already
    exist, as when attaching to a service whose clients keep pools."""
    load = subprocess.Popen(load_argv + ['--hold'], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert load.stdout.readline() == b'connected\n'
        with ditto.Profile(duration=duration, cpu_windows=-1) as p:
            p.attach(pid)
            p.step(200)
            load.stdin.write(b'go\n')
            load.stdin.close()
            while p.step(100):
                pass
            out, err = load.stdout.read(), load.stderr.read()
            load.wait(60)
            model = p.finish()
    finally:
        if load.poll() is None:
            load.kill()
            load.wait()
    return model, subprocess.CompletedProcess(load_argv, load.returncode, out, err)


@pytest.mark.parametrize('timing', ['connect_in_window', 'connected_before_window'])
@pytest.mark.parametrize('name', sorted(CASES))
def test_ground_truth_server_is_recovered(server_factory, name, timing):
    args, conns, expected, mux = CASES[name]
    srv = start(server_factory, name, args)
    if timing == 'connect_in_window':
        model, load = profile_during(srv.pid, client(srv.port, conns), duration=2.5)
    else:
        model, load = profile_preconnected(srv.pid, client(srv.port, conns), duration=3.0)
        # The premise: the window saw no connection accepted.
        assert not model.get('services[0].requests.connections')
    assert load.returncode == 0, load.stderr
    net = model.get('services[0].network')
    assert {k: net[k] for k in expected} == expected
    assert model.get('services[0].framing') == 'length-prefixed'
    # Connections accepted before the window are not ones the server opened.
    assert 'outbound' not in model.json()['services'][0]

    # Also with connections made before the window, whose first request
    # may come from a read that was blocked when the window opened.
    requests = model.get('services[0].requests.count')
    assert REQUESTS <= requests <= REQUESTS + 2
    lo, hi = single_bucket(model, 'services[0].requests.request_bytes')
    assert lo <= BYTES + 4 <= hi
    lo, hi = single_bucket(model, 'services[0].requests.response_bytes')
    assert lo <= RESPONSE + 4 <= hi

    read = model.get('services[0].syscalls[network:read:tcp]')
    ok_reads = (read['calls'] - read['errors']) / requests
    assert 0.99 <= ok_reads <= 1.01 + conns / REQUESTS   # one end-of-file read per connection
    assert 0.99 <= per_request(model, 'network', 'write', 'tcp') <= 1.01
    if name == 'srv_busypoll':
        assert read['errors'] > 0, 'a busy-polling server reads EAGAIN'
    if mux:
        call, fd = mux.split(':')
        assert 0 < per_request(model, 'network', call, fd) <= 1.05

    roles = thread_classes(model)
    network = sum(c for c, _ in roles['network'])
    if name == 'srv_blocking':
        assert roles['acceptor'] == [(1, 'blocking')]
        assert network >= conns
    elif name == 'srv_epoll_pool':
        assert roles['acceptor'] == [(1, 'blocking')]
        assert network == 3
    elif name == 'srv_prefork':
        assert network == 3
        assert 'acceptor' not in roles
    else:
        assert roles['network'] == [(1, expected['io_model'])]


def hist_mean(h):
    total = sum(n for _, _, n in h['buckets'])
    return sum((lo + hi) / 2 * n for lo, hi, n in h['buckets']) / total if total else 0.0


def after_and_service(server_factory, work_after):
    srv = start(server_factory, 'srv_blocking', ['--work-after', str(work_after)])
    model, load = profile_during(srv.pid, client(srv.port, 2), duration=2.5)
    assert load.returncode == 0, load.stderr
    after = model.get('services[0].requests.after_response_ns')
    assert sum(n for _, _, n in after['buckets']) >= 500, after
    return hist_mean(after), hist_mean(model.get('services[0].requests.service_ns'))


def test_work_after_the_response_is_measured(server_factory):
    """srv_blocking --work-after N works once it has answered (as a server
    that logs does): the time from its response to its next read grows by
    that work, and the service time (request read to response) does not."""
    plain_after, plain_service = after_and_service(server_factory, 0)
    after, service = after_and_service(server_factory, 200000)
    print('after %.0f ns (plain %.0f), service %.0f ns (plain %.0f)'
          % (after, plain_after, service, plain_service))
    assert after >= 200000 and after >= 5 * plain_after
    assert service < after / 4


# A client that opens a connection per request and closes it once
# answered, one after another (nginx's upstream connections to a node
# tier under one client of its own).
ONE_AT_A_TIME = r"""
import socket, struct, sys
port, n, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for _ in range(n):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(struct.pack('>I', size) + b'x' * size)
    got = b''
    while len(got) < 4 or len(got) < 4 + struct.unpack('>I', got[:4])[0]:
        more = s.recv(65536)
        if not more:
            sys.exit('closed early')
        got += more
    s.close()
"""


@pytest.mark.parametrize('name', ['srv_epoll', 'srv_poll'])
def test_an_event_loop_given_connections_one_at_a_time_is_not_serial(server_factory, name):
    """An event loop that accepts for itself keeps its listener watched:
    served one connection after another because its client opens them so,
    it is no server of serial connections (a clone of it taking one at a
    time makes a pooling caller wait for ever on its second)."""
    srv = start(server_factory, name, [])
    model, load = profile_during(srv.pid, [sys.executable, '-c', ONE_AT_A_TIME, str(srv.port),
                                           '1500', str(BYTES)], duration=2.5)
    assert load.returncode == 0, load.stderr
    assert model.get('services[0].requests.connections') >= 100
    assert not model.get('services[0].network')['serial_connections']
