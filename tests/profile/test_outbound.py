# SPDX-License-Identifier: MIT
"""Inbound and outbound traffic kept apart (issue 18): a proxy's calls to
its back end are not responses. srv_proxy answers each request once and
makes one call to a back end (srv_blocking) per request, over a connection
it opened itself; the model must count one response per request, of the
client-facing size, and put the back-end calls in services[].outbound.
The clone does not make them yet, and synth says so."""

import os
import subprocess
import time

import pytest

import ditto
from conftest import free_port, per_request, profile_during

SERVERS = os.environ.get('DITTO_SERVERS_DIR', '')
CLI = os.environ.get('DITTO_CLI')
REQUESTS = 3000
CONNS = 3
BYTES = 100            # request payload; 4-byte length prefix on the wire
RESPONSE = 128         # the proxy's answer to its clients
BACKEND_RESPONSE = 300  # the back end's answer to the proxy


def exe(name):
    path = os.path.join(SERVERS, name)
    if not os.access(path, os.X_OK):
        pytest.fail('%s not built (DITTO_SERVERS_DIR=%r)' % (name, SERVERS))
    return path


@pytest.fixture
def proxy(server_factory):
    """(proxy server, back-end port)."""
    bport = free_port()
    server_factory([exe('srv_blocking'), '--port', str(bport), '--response-bytes',
                    str(BACKEND_RESPONSE), '--max-seconds', '60'], bport)
    port = free_port()
    srv = server_factory([exe('srv_proxy'), '--port', str(port), '--backend', str(bport),
                          '--response-bytes', str(RESPONSE), '--max-seconds', '60'], port)
    return srv, bport


def client(port):
    return [exe('srv_client'), '--port', str(port), '--connections', str(CONNS),
            '--requests', str(REQUESTS), '--request-bytes', str(BYTES),
            '--response-bytes', str(RESPONSE)]


@pytest.fixture
def proxy_model(proxy):
    srv, bport = proxy
    model, load = profile_during(srv.pid, client(srv.port), duration=3.0)
    assert load.returncode == 0, load.stderr
    return model, bport


def test_backend_calls_are_not_responses(proxy_model):
    model, _ = proxy_model
    req = model.get('services[0].requests')
    assert REQUESTS <= req['count'] <= REQUESTS + 2
    # One response per request, of the client-facing size only.
    assert 0.99 <= per_request(model, 'network', 'write', 'tcp') <= 1.01
    reads = model.get('services[0].syscalls[network:read:tcp]')
    assert (reads['calls'] - reads['errors']) / req['count'] <= 1.01 + CONNS / REQUESTS
    mean = req['response_bytes_total'] / req['count']
    assert abs(mean - (RESPONSE + 4)) <= 0.01 * (RESPONSE + 4), mean
    assert abs(req['request_bytes_total'] / req['count'] - (BYTES + 4)) <= 1.05
    # The connect() to the back end is outbound too.
    names = {s['name'] for s in model.get('services[0].syscalls')}
    assert 'connect' not in names, names


def test_backend_calls_are_outbound(proxy_model):
    model, bport = proxy_model
    count = model.get('services[0].requests.count')
    out = model.get('services[0].outbound')
    assert len(out) == 1, out
    o = out[0]
    assert (o['address'], o['port']) == ('127.0.0.1', bport)
    assert o['framing'] == 'length-prefixed'
    assert o['connections'] == CONNS
    assert 0.99 <= o['calls'] / count <= 1.01
    assert o['request_bytes_total'] == o['calls'] * (BYTES + 4)
    # The window may close between a call's send and its answer.
    assert abs(o['response_bytes_total'] - o['calls'] * (BACKEND_RESPONSE + 4)) <= \
        CONNS * (BACKEND_RESPONSE + 4)
    assert 0.99 <= o['sends'] / o['calls'] <= 1.01


def test_backend_connections_made_before_the_window_are_outbound(proxy):
    """Attached to a proxy already under load: its back-end connections
    predate the window (no connect() seen), and are still outbound."""
    srv, bport = proxy
    load = subprocess.Popen([exe('srv_client'), '--port', str(srv.port), '--connections',
                             str(CONNS), '--requests', str(10 ** 7), '--request-bytes',
                             str(BYTES), '--response-bytes', str(RESPONSE), '--rate', '2000',
                             '--max-seconds', '30'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        with ditto.Profile(duration=2.0, cpu_windows=-1) as p:
            p.attach(srv.pid)
            while p.step(100):
                pass
            model = p.finish()
    finally:
        load.terminate()
        load.wait(10)
    count = model.get('services[0].requests.count')
    assert count > 1000, count
    assert 0.99 <= per_request(model, 'network', 'write', 'tcp') <= 1.01
    out = model.get('services[0].outbound')
    assert [(o['address'], o['port']) for o in out] == [('127.0.0.1', bport)], out
    assert out[0]['connections'] == 0
    assert 0.99 <= out[0]['calls'] / count <= 1.01


def test_synth_says_the_clone_drops_outbound_calls(proxy_model, tmp_path):
    model, bport = proxy_model
    path = tmp_path / 'proxy.msgpack'
    model.save(str(path))
    tree = tmp_path / 'tree'
    r = subprocess.run([CLI, 'synth', str(path), '-o', str(tree), '--no-build'],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    warned = [ln for ln in r.stderr.splitlines() if 'drops these calls' in ln]
    assert len(warned) == 1, r.stderr
    assert '127.0.0.1:%d (1.00 calls per request)' % bport in warned[0] or \
        '127.0.0.1:%d (0.99 calls per request)' % bport in warned[0], warned
    readme = (tree / 'README.md').read_text()
    assert 'outbound calls, which this clone does not make' in readme
    assert 'port %d' % bport in readme
