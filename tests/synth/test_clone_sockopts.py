# SPDX-License-Identifier: MIT
"""Socket options and sendfile are part of what a clone replays (issue
18): srv_nagle leaves Nagle on and answers in two writes, so each response
waits for the client's delayed ACK; srv_epoll sets TCP_NODELAY;
srv_sendfile sends each payload from a file. Each is profiled under
srv_client, cloned, and its clone profiled under the same load: the
clone's connections have the original's options, socket calls per request
by kind (sendfile too) are within 5% and response bytes within 1%. Both throughputs are
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


# server: (the options most connections have, payload bytes per response)
CASES = {
    'srv_nagle': ([], 128),
    'srv_epoll': ([(6, 1, 1)], 128),       # SOL_TCP, TCP_NODELAY, on
    'srv_sendfile': ([(6, 1, 1)], 4096),   # its payload by sendfile()
}


def client(port, response_bytes):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections',
            str(CONNS), '--requests', str(10 ** 7), '--request-bytes', '100',
            '--response-bytes', str(response_bytes), '--max-seconds', '60']


def sockopts(path):
    """The options most of the connections had, as (level, name, value)."""
    net = d.Model.load(path).get('services[0].network')
    assert 'sockopts' in net, 'the profile did not record socket options: %r' % net
    conns = net['sockopt_connections']
    assert conns > 0
    return sorted((o['level'], o['name'], o['value']) for o in net['sockopts']
                  if 2 * o['connections'] > conns)


def by_kind(path):
    """{(call, fd kind): calls per request} over all thread classes: how
    a thread-per-connection clone's threads fall into classes is the
    thread model's business, not this test's."""
    out = {}
    for (_, name, fd), rate in per_request(path)[0].items():
        out[name, fd] = out.get((name, fd), 0) + rate
    return out


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


@pytest.mark.parametrize('name', sorted(CASES))
def test_clone_has_the_originals_socket_options(tmp_path, started, name):
    want, payload = CASES[name]
    port = free_port()
    srv = Service([os.path.join(SERVERS, name), '--port', str(port), '--response-bytes',
                   str(payload), '--max-seconds', '120'], port)
    started.append(srv)
    tree = tmp_path / 'clone'
    orig = clone_service(srv.pid, tree, client(port, payload), duration=2.5, windows=0)
    srv.stop()
    clone = Clone(tree)
    started.append(clone)
    # not tree + '.msgpack': that is the original's model
    cm = profile_clone(clone, name, str(tmp_path / 'clone-profile.msgpack'),
                       client(clone.port, payload), duration=2.5, windows=0)
    assert clone.stop() == 0
    print('%s: original %.0f requests/s, clone %.0f requests/s'
          % (name, throughput(orig), throughput(cm)))
    if not want:   # Nagle kept: not TCP_NODELAY's hundredfold (447 vs 43,000 requests/s)
        assert throughput(cm) < 5 * throughput(orig)
    assert sockopts(orig) == want
    assert sockopts(cm) == want
    calls_o, calls_c = by_kind(orig), by_kind(cm)
    resp_o, resp_c = response_mean(orig), response_mean(cm)
    for key, rate in calls_o.items():
        if key[1] == 'tcp' and rate >= 0.05:
            print('  %s/%s: %.3f vs %.3f per request' % (key[0], key[1], rate,
                                                          calls_c.get(key, 0)))
            assert key in calls_c and rel(rate, calls_c[key]) <= 0.05, (key, rate, calls_c)
    print('  response bytes: %.1f vs %.1f' % (resp_o, resp_c))
    assert rel(resp_o, resp_c) <= 0.01, (resp_o, resp_c)
