# SPDX-License-Identifier: MIT
"""A thread-per-connection server in an interpreted language that leaves
Nagle on (issue 18, items 4 and 9): Python's ThreadingHTTPServer
(py_http_server.py) under wrk, profiled, cloned, and the clone profiled
under the same load. Both have the same thread classes and network model
(no TCP_NODELAY on the serving sockets), socket calls and bytes per
request within the issue's bounds, and the clone keeps the original's
pace: two sends per response with Nagle on make a keep-alive client wait
for the delayed ACK, and a clone that set TCP_NODELAY or answered in one
write would serve some hundred times faster. CPU windows are off (a
stepped interpreter is slow and the shape is what is checked)."""

import os
import re
import subprocess
import sys

import pytest

from compare import assert_requests_match, classes, clone_service, network, profile_clone
from conftest import Clone, Service, free_port, need

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.environ.get('DITTO_SYNTH_QUICK') == '1',
                                 reason='plain build only (sanitizer pass: see meson.build)')]

HERE = os.path.dirname(os.path.abspath(__file__))
CONNECTIONS = 4
# The clone's pace against the original's: both wait for delayed ACKs, so
# the ratio is near 1; a clone without Nagle's wait is far above 3.
PACE_BOUND = 3.0


def wrk(port, seconds=8):
    return [need('wrk'), '-t1', '-c%d' % CONNECTIONS, '-d%ds' % seconds,
            'http://127.0.0.1:%d/' % port]


def rate(port):
    r = subprocess.run(wrk(port, 2), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return float(re.search(r'Requests/sec:\s+([\d.]+)', r.stdout).group(1))


def test_python_thread_per_connection_clone(tmp_path, started):
    port = free_port()
    srv = Service([sys.executable, os.path.join(HERE, 'py_http_server.py'), str(port)], port)
    started.append(srv)
    orig = clone_service(srv.pid, tmp_path / 'clone', wrk(port), duration=3, windows=0)
    rate_o = rate(port)
    srv.stop()
    clone = Clone(tmp_path / 'clone')
    started.append(clone)
    cm = profile_clone(clone, 'python', str(tmp_path / 'clone-profile.msgpack'), wrk(clone.port),
                       duration=3, windows=0)
    rate_c = rate(clone.port)
    assert clone.stop() == 0
    print('classes: %s vs %s' % (classes(orig), classes(cm)))
    print('network: %s vs %s' % (network(orig), network(cm)))
    print('requests/s under wrk -c%d: original %.0f, clone %.0f' % (CONNECTIONS, rate_o, rate_c))
    assert network(orig)['io_model'] == 'blocking' and not network(orig)['network_threads']
    assert not any(o[:2] == (6, 1) and o[2] for o in network(orig).get('sockopts', []))
    assert network(orig) == network(cm)
    assert classes(orig) == classes(cm)
    assert_requests_match(orig, cm)
    assert rate_c / rate_o < PACE_BOUND, (rate_o, rate_c)
