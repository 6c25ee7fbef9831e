# SPDX-License-Identifier: MIT
"""A proxy's clone answers once per request (issue 18, item 3): srv_proxy
makes one back-end call per request; its writes to the back end were
counted as responses, so its clone wrote twice to its client per request.
Profiled under srv_client and cloned, the clone's socket calls per request
by kind are within 5% of the original's client-side calls (1 read, 1
write), its responses within 1% in size, and it makes no outbound call
(the tree's README says it drops them)."""

import os

import pytest

import ditto as d
from compare import clone_service, profile_clone, rel
from conftest import Clone, Service, free_port
from test_clone_sockopts import by_kind, response_mean, throughput

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

SERVERS = os.environ.get('DITTO_SERVERS_DIR', '')
CONNS = 4
RESPONSE = 128


def client(port):
    return [os.path.join(SERVERS, 'srv_client'), '--port', str(port), '--connections',
            str(CONNS), '--requests', str(10 ** 7), '--request-bytes', '100',
            '--response-bytes', str(RESPONSE), '--max-seconds', '60']


def test_proxy_clone_answers_once_per_request(tmp_path, started):
    bport, port = free_port(), free_port()
    started.append(Service([os.path.join(SERVERS, 'srv_blocking'), '--port', str(bport),
                            '--response-bytes', '300', '--max-seconds', '120'], bport))
    srv = Service([os.path.join(SERVERS, 'srv_proxy'), '--port', str(port), '--backend',
                   str(bport), '--response-bytes', str(RESPONSE), '--max-seconds', '120'], port)
    started.append(srv)
    tree = tmp_path / 'clone'
    orig = clone_service(srv.pid, tree, client(port), duration=2.5, windows=0)
    srv.stop()
    assert 'outbound calls, which this clone does not make' in (tree / 'README.md').read_text()
    clone = Clone(tree)
    started.append(clone)
    cm = profile_clone(clone, 'srv_proxy', str(tmp_path / 'clone-profile.msgpack'),
                       client(clone.port), duration=2.5, windows=0)
    assert clone.stop() == 0
    print('srv_proxy: original %.0f requests/s, clone %.0f requests/s'
          % (throughput(orig), throughput(cm)))
    calls_o, calls_c = by_kind(orig), by_kind(cm)
    assert 0.99 <= calls_o['write', 'tcp'] <= 1.01, calls_o
    for key, rate in sorted(calls_o.items()):
        if key[1] == 'tcp' and rate >= 0.05:
            print('  %s/%s: %.3f vs %.3f per request' % (key[0], key[1], rate,
                                                          calls_c.get(key, 0)))
            assert key in calls_c and rel(rate, calls_c[key]) <= 0.05, (key, rate, calls_c)
    resp_o, resp_c = response_mean(orig), response_mean(cm)
    print('  response bytes: %.1f vs %.1f' % (resp_o, resp_c))
    assert rel(resp_o, resp_c) <= 0.01, (resp_o, resp_c)
    assert d.Model.load(orig).get('services[0].outbound')
    assert 'outbound' not in d.Model.load(cm).json()['services'][0]
