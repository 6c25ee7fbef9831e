# SPDX-License-Identifier: MIT
"""Socket options are part of what a clone replays (issue 18): srv_nagle
leaves Nagle on and answers in two writes, so each response waits for the
client's delayed ACK; srv_epoll sets TCP_NODELAY. Each is profiled under
srv_client, cloned, and its clone profiled under the same load: the
clone's connections have the original's options, socket calls per request
by kind are within 5% and response bytes within 1%. Both throughputs are
printed: a clone that set TCP_NODELAY on srv_nagle's behalf answered a
hundred times faster."""

import os

import pytest

import ditto as d
from compare import clone_service, per_request, profile_clone, rel
from conftest import Clone, Service, free_port

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

SERVERS = os.environ.get('DITTO_SERVERS_DIR', '')
CONNS = 4


def client(port, response_bytes=True):
    argv = [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections',
            str(CONNS), '--requests', str(10 ** 7), '--request-bytes', '100',
            '--max-seconds', '60']
    return argv + (['--response-bytes', '128'] if response_bytes else [])


def sockopts(path):
    """The options most of the connections had, as (level, name, value)."""
    net = d.Model.load(path).get('services[0].network')
    assert 'sockopts' in net, 'the profile did not record socket options: %r' % net
    conns = net['sockopt_connections']
    assert conns > 0
    return sorted((o['level'], o['name'], o['value']) for o in net['sockopts']
                  if 2 * o['connections'] > conns)


def response_mean(path):
    """Bytes per response over the responses the window saw end (the
    total sums those the histogram counts; at a few hundred requests the
    last one of each connection, unfinished, would move a per-request
    mean by 2%)."""
    req = d.Model.load(path).get('services[0].requests')
    return req['response_bytes_total'] / req['response_bytes']['total']


def throughput(path):
    m = d.Model.load(path)
    return m.get('services[0].requests')['count'] / m.get('meta')['window_s']


@pytest.mark.parametrize('name,want', [('srv_nagle', []), ('srv_epoll', [(6, 1, 1)])])
def test_clone_has_the_originals_socket_options(tmp_path, started, name, want):
    port = free_port()
    srv = Service([os.path.join(SERVERS, name), '--port', str(port), '--response-bytes', '128',
                   '--max-seconds', '120'], port)
    started.append(srv)
    tree = tmp_path / 'clone'
    orig = clone_service(srv.pid, tree, client(port), duration=2.5, windows=0)
    srv.stop()
    clone = Clone(tree)
    started.append(clone)
    # not tree + '.msgpack': that is the original's model
    cm = profile_clone(clone, name, str(tmp_path / 'clone-profile.msgpack'),
                       client(clone.port, response_bytes=False), duration=2.5, windows=0)
    assert clone.stop() == 0
    print('%s: original %.0f requests/s, clone %.0f requests/s'
          % (name, throughput(orig), throughput(cm)))
    assert sockopts(orig) == want
    assert sockopts(cm) == want
    calls_o, _, _ = per_request(orig)
    calls_c, _, _ = per_request(cm)
    resp_o, resp_c = response_mean(orig), response_mean(cm)
    for key, rate in calls_o.items():
        if key[2] == 'tcp' and rate >= 0.05:
            assert key in calls_c and rel(rate, calls_c[key]) <= 0.05, (key, rate, calls_c)
    assert rel(resp_o, resp_c) <= 0.01, (resp_o, resp_c)
