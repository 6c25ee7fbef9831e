# SPDX-License-Identifier: MIT
"""A valid model can ask for anything: 10,000 processes, 10^12
instructions or 2^64 system calls per request, gigabyte working sets and
responses. synth brings each figure within the limits that protect the
host and names every clamp in a warning; --no-clamp lifts them; and
whatever its body and replay loops are doing, a clone stops within a
second of SIGTERM or its --max-seconds."""

import re
import socket
import time

import pytest

import ditto as d
from conftest import Clone, ditto, free_port

STOP_S = 1.0
GIB = 1 << 30


def serving(m, name, processes=1, threads=2, insts=1000):
    s = m.add_service(name, framing='resp')
    s.network.io_model = 'epoll'
    s.network.processes = processes
    s.network.network_threads = threads
    s.add_thread('serve', count=threads, role='network', io_model='epoll')
    s.add_syscall('serve', 'read', fd_kind='tcp', calls=1000)
    s.add_syscall('serve', 'write', fd_kind='tcp', calls=1000)
    s.requests.count = 1000
    s.add_cpu('serve').insts_per_request.add(insts)
    return s


def everything_model():
    """Every figure a clone could exhaust a host with, at once."""
    m = d.Model()
    s = serving(m, 'everything', processes=10000, threads=100000, insts=10**12)
    s.thread('serve').count = 100000
    s.syscall('serve', 'write', 'tcp').calls = 10**9
    s.add_syscall('serve', 'sched_yield', calls=2**64 - 1)
    c = s.add_syscall('serve', 'pread64', fd_kind='file', calls=1000)
    c.size.add(GIB)
    c.offset.add(1 << 40)
    s.add_syscall('serve', 'nanosleep', calls=1000).size.add(10 * 10**9)
    s.add_syscall('serve', 'mmap', calls=1000).size.add(64 * GIB)
    s.requests.response_bytes.add(GIB)
    s.find_cpu('serve').dws.add(64 * GIB, 100)
    s.network.sockopt_connections = 1
    s.network.add_sockopt(1, 7, 2**31 - 1, connections=1)  # SO_SNDBUF: the kernel caps it
    return m


def background_model(classes, first, each):
    """One process whose background classes alone would fork a host down."""
    m = d.Model()
    s = serving(m, 'classes')
    for i in range(classes):
        t = s.add_thread('bg%d' % i, count=first if i == 0 else each, role='background',
                         io_model='blocking')
        t.wakeups = 10
        t.cpu_ns = 1000
    return m


def busy_model(kind):
    """A request that never ends unless the clone looks at its stop: a
    body of 10^12 instructions, 2^64 - 1 calls, or sleeps of 10 s."""
    m = d.Model()
    s = serving(m, 'busy-' + kind, insts=10**12 if kind == 'body' else 1000)
    if kind == 'replay':
        s.add_syscall('serve', 'sched_yield', calls=2**64 - 1)
    elif kind == 'sleep':
        s.add_syscall('serve', 'nanosleep', calls=10**6).size.add(10 * 10**9, 10**6)
    return m


def synth(tmp_path, m, *args):
    path = tmp_path / (m.service(0).name + '.msgpack')
    m.validate()
    m.save(str(path))
    tree = tmp_path / ('tree-' + m.service(0).name)
    r = ditto('synth', path, '-o', tree, *args)
    return tree, r.stderr


def config_value(tree, field):
    m = re.search(r'\.%s = (\d+)' % field, (tree / 'clone_config.c').read_text())
    return int(m.group(1))


def warnings(stderr):
    return [ln for ln in stderr.splitlines() if 'warning' in ln]


def named(stderr, what):
    """The warnings that clamp `what`."""
    pattern = re.compile(r'asks for up to \d+ %s;' % re.escape(what))
    return [ln for ln in warnings(stderr) if pattern.search(ln)]


def send_request(port):
    """A PING the clone starts to serve; the socket stays open."""
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    s.sendall(b'*1\r\n$4\r\nPING\r\n')
    time.sleep(0.3)  # well inside the request's body or replay
    return s


def stop_time(clone, how, started):
    """Seconds from the stop (SIGTERM now, or the --max-seconds deadline
    after started) to the clone's exit; the exit status must be 0."""
    if how == 'sigterm':
        t0 = time.monotonic()
        clone.proc.terminate()
    else:
        t0 = started + MAX_SECONDS
    rc = clone.proc.wait(30)
    clone.proc.stdout.close()
    clone.proc.stderr.close()
    assert rc == 0, rc
    return time.monotonic() - t0


MAX_SECONDS = 3


def run_and_stop(tree, how):
    extra = ('--max-seconds', str(MAX_SECONDS)) if how == 'max-seconds' else ()
    started = time.monotonic()
    clone = Clone(tree, *extra)
    try:
        conn = send_request(clone.port)
        took = stop_time(clone, how, started)
        conn.close()
    finally:
        if clone.proc.poll() is None:
            clone.proc.kill()
            clone.proc.wait()
    return took


def test_every_clamp_is_named_and_the_clamped_clone_serves_and_stops(tmp_path):
    tree, err = synth(tmp_path, everything_model())
    for what in ('processes', 'serving threads per process', 'threads in all processes',
                 'body instructions per request', 'calls per request of one system call',
                 'bytes in one data region of the body', 'bytes of body data regions in all processes',
                 'bytes of scratch file', 'bytes per response', 'bytes moved by one file call',
                 'nanoseconds in one replayed sleep', 'bytes in one replayed mmap',
                 'writes per response'):
        lines = named(err, what)
        assert len(lines) == 1, (what, err)
        assert 'everything' in lines[0]
    assert all('--no-clamp lifts' in ln or 'no option lifts' in ln for ln in warnings(err))
    assert config_value(tree, 'processes') == 64
    assert config_value(tree, 'processes') * config_value(tree, 'threads') <= 4096
    assert config_value(tree, 'scratch_bytes') == GIB
    per_request = re.findall(r'\.per_request = ([\d.]+)', (tree / 'clone_config.c').read_text())
    assert per_request and max(float(x) for x in per_request) <= 1000
    regions = int(re.search(r'ditto_body_region_bytes:\s+\.quad (\d+)',
                            (tree / 'body.S').read_text()).group(1))
    assert regions * 64 <= GIB + 64 * (1 << 20), regions  # + each process's slots
    assert run_and_stop(tree, 'sigterm') < STOP_S


@pytest.mark.parametrize('shape,limits', [
    ((200, 1000, 10), ('threads in one background class', 'background thread classes')),
    ((20, 100, 100), ('background threads per process',)),
])
def test_background_classes_are_limited_and_named(tmp_path, shape, limits):
    tree, err = synth(tmp_path, background_model(*shape))
    for what in limits:
        assert len(named(err, what)) == 1, (what, err)
    config = (tree / 'clone_config.c').read_text()
    threads = [int(x) for x in re.findall(r'\.threads = (\d+), \.period_ns', config)]
    assert len(threads) <= 64 and max(threads) <= 256 and sum(threads) <= 1024, threads
    assert run_and_stop(tree, 'sigterm') < STOP_S


@pytest.mark.parametrize('kind', ['body', 'replay', 'sleep'])
def test_a_clone_without_limits_stops_within_a_second(tmp_path, kind):
    tree, err = synth(tmp_path, busy_model(kind), '--no-clamp')
    assert not any('--no-clamp lifts' in ln for ln in warnings(err)), err
    if kind == 'replay':
        assert any('the most the runtime represents' in ln
                   for ln in named(err, 'calls per request of one system call')), err
    for how in ('sigterm', 'max-seconds'):
        took = run_and_stop(tree, how)
        assert took < STOP_S, '%s: %.2f s after %s' % (kind, took, how)


def test_no_clamp_lifts_the_host_limits_through_cli_and_python(tmp_path):
    m = everything_model()
    m.service(0).network.processes = 100
    tree, err = synth(tmp_path, m, '--no-clamp', '--no-build')
    assert config_value(tree, 'processes') == 100
    assert not named(err, 'processes')
    assert named(err, 'bytes per response')  # a runtime cap holds
    py_tree = tmp_path / 'py-tree'
    d.synth(m, py_tree, no_clamp=True)
    assert config_value(py_tree, 'processes') == 100
    d.synth(m, py_tree, force=True)
    assert config_value(py_tree, 'processes') == 64


def test_network_section_round_trips_through_python(tmp_path):
    m = d.Model()
    n = m.add_service('net').network
    n.io_model, n.processes, n.network_threads = 'poll', 3, 7
    n.accept_dispatch, n.network_dispatch = True, True
    n.client_connections, n.client_mode = 5, 'sync'
    m.save(str(tmp_path / 'net.msgpack'))
    n = d.Model.load(str(tmp_path / 'net.msgpack')).service(0).network
    assert (n.io_model, n.processes, n.network_threads) == ('poll', 3, 7)
    assert n.accept_dispatch and n.network_dispatch
    assert (n.client_connections, n.client_mode) == (5, 'sync')
